package dev.kanuki.servlet;

import dev.kanuki.testkit.RedisServer;
import org.junit.jupiter.api.Tag;

/** The filter on {@code redis://}, as on a web farm: a real redis-server started by the test kit. */
@Tag("servers")
class RedisLockingFilterTest extends LockingFilterScenarios {
    @Override
    String uri() {
        return RedisServer.shared().kanukiUri();
    }
}
