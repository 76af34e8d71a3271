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
    requires io.netty.common; // shutting Lettuce's client resources down returns a Netty Future

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.redis.RedisLockBackendFactory;
}
