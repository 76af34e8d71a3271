/**
 * {@link dev.kanuki.servlet.LockingFilter}: a Jakarta Servlet 6.0 filter that runs a request only
 * while it holds a kanuki lock named after the request.
 */
module dev.kanuki.servlet {
    requires transitive dev.kanuki.core;
    requires transitive jakarta.servlet;
    requires org.slf4j;

    exports dev.kanuki.servlet;
}
