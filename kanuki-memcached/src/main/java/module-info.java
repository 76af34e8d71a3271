/**
 * kanuki's {@code memcached://} backend, with a meta-protocol client of its own. Applications use
 * it through {@code dev.kanuki.LockProvider.open("memcached://...")}; the module exports nothing
 * and is found as a {@link dev.kanuki.spi.LockBackendFactory} service.
 */
module dev.kanuki.memcached {
    requires dev.kanuki.core;
    requires org.slf4j;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.memcached.MemcachedLockBackendFactory;
}
