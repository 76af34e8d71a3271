/**
 * kanuki's {@code redis://}, {@code rediss://} and {@code redis-sentinel://} backends over
 * Lettuce. Applications use them through {@code dev.kanuki.LockProvider.open("redis://...")}; the
 * module exports nothing and is found as a {@link dev.kanuki.spi.LockBackendFactory} service.
 */
@SuppressWarnings("requires-automatic") // lettuce-core has no module-info; lettuce.core is its declared Automatic-Module-Name
module dev.kanuki.redis {
    requires dev.kanuki.core;
    requires org.slf4j;
    requires lettuce.core;
    // Lettuce, an automatic module, cannot require the Netty modules it runs on (its POM's
    // netty-common, -handler, -transport, -resolver-dns): without these lines they stay out of the
    // module graph and the first connection fails with NoClassDefFoundError. Shutting Lettuce's
    // client resources down also returns a Netty Future, used here.
    requires io.netty.common;
    requires io.netty.handler;
    requires io.netty.transport;
    requires io.netty.resolver.dns;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.redis.RedisLockBackendFactory;
}
