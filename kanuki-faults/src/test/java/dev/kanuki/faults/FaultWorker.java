package dev.kanuki.faults;

import dev.kanuki.FencedWriteRefusedException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.jdbc.JdbcFencedResource;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * A worker process of the fault suite: takes the lock, says {@code HELD <token>}, says
 * {@code LOST} when its handle reports the lock lost, and on {@code write VALUE} writes VALUE to
 * the fenced resource (a row of a SQLite table that refuses lower tokens) with its token, saying
 * {@code WROTE} or {@code REFUSED}. Arguments: URI NAME FENCE_DB.
 */
public final class FaultWorker {
    private FaultWorker() {
    }

    /**
     * @param args URI, lock name, path of the fenced resource's SQLite database
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(10_000);
        SQLiteDataSource db = new SQLiteDataSource(config);
        db.setUrl("jdbc:sqlite:" + args[2]);
        JdbcFencedResource resource = JdbcFencedResource.open(db, "counter");
        try (LockProvider provider = LockProvider.open(args[0]);
             LockHandle handle = provider.lock(args[1]).acquire(Duration.ofSeconds(60))) {
            say("HELD " + handle.fencingToken());
            handle.lost().thenRun(() -> say("LOST"));
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("write ")) {
                    try {
                        resource.write(handle.fencingToken(), line.substring(6).getBytes(StandardCharsets.UTF_8));
                        say("WROTE");
                    } catch (FencedWriteRefusedException e) {
                        say("REFUSED");
                    }
                } else if (line.equals("release")) {
                    break;
                }
            }
        }
        say("RELEASED");
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
