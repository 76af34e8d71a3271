/**
 * The torture harness ({@link dev.kanuki.torture.Torture}): worker processes increment a shared
 * counter under a lock and log every entry and exit. Workers run on the class path of the JVM
 * that starts them ({@code java.class.path}).
 */
module dev.kanuki.torture {
    requires dev.kanuki.core;

    exports dev.kanuki.torture;
}
