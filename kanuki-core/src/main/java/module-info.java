/**
 * kanuki's core: the public API ({@code dev.kanuki}) and the backend SPI ({@code dev.kanuki.spi}).
 * The engine and the in-memory backend are internal; backends reach the engine through
 * {@link dev.kanuki.spi.BackendProviders} and are found through {@link dev.kanuki.spi.LockBackendFactory}.
 */
module dev.kanuki.core {
    requires org.slf4j;

    exports dev.kanuki;
    exports dev.kanuki.spi;

    uses dev.kanuki.spi.LockBackendFactory;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.mem.MemLockBackendFactory;
}
