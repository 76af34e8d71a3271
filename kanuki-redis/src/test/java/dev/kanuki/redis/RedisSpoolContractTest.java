package dev.kanuki.redis;

import dev.kanuki.contract.WorkSpoolContract;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** The Redis store's own spool ({@code LockProvider.spool()} on {@code redis://}) passes the spool contract against a real redis-server. */
@Tag("servers")
class RedisSpoolContractTest extends WorkSpoolContract {
    @Override
    protected String uri(Path tempDir) {
        // A short lease: a holder the proof kills leaves its lock to the others after it.
        String uri = RedisServer.shared().kanukiUri();
        return uri + (uri.contains("?") ? "&" : "?") + "lease=2s";
    }

    @Override
    protected String spoolSpec(Path tempDir) {
        return "provider";
    }
}
