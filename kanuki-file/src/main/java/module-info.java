/**
 * kanuki's {@code file:DIR} backends (strategies {@code os}, {@code mkdir}, {@code symlink},
 * {@code rename}, {@code create}, {@code queue}). Applications use them through
 * {@code dev.kanuki.LockProvider.open("file:...")}; the module exports nothing and is found as a
 * {@link dev.kanuki.spi.LockBackendFactory} service.
 */
module dev.kanuki.file {
    requires dev.kanuki.core;
    requires org.slf4j;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.file.FileLockBackendFactory;
}
