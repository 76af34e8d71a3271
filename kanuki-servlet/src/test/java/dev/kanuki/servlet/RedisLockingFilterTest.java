package dev.kanuki.servlet;

import dev.kanuki.testkit.RedisServer;

/** The filter on {@code redis://}, as on a web farm: a real redis-server started by the test kit. */
class RedisLockingFilterTest extends LockingFilterScenarios {
    @Override
    String uri() {
        return RedisServer.shared().kanukiUri();
    }
}
