package dev.kanuki.contract;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.InputStream;
import java.time.Duration;

/**
 * A second process for the contract suite: acquires a lock, prints {@code HELD <token>}, holds
 * it until its standard input closes (or it is killed), then releases it and prints
 * {@code RELEASED}.
 *
 * <p>Arguments: {@code URI NAME exclusive|shared|permit:N [exit] [timeout=ISO-8601]}. With
 * {@code exit} it calls {@code System.exit(0)} right after printing {@code HELD}, without closing
 * anything, so that only kanuki's shutdown hook can release the lock. {@code timeout=PT5S} bounds
 * the wait for the lock (default 60 s): a test that expects the lock free uses a bound well below
 * any lease, so a lock left behind fails it instead of being waited out.
 */
public final class LockHolderMain {
    private LockHolderMain() {
    }

    /**
     * Runs the holder process.
     *
     * @param args URI, lock name, mode
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        String mode = args[2];
        boolean exit = false;
        Duration timeout = Duration.ofSeconds(60);
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("exit")) {
                exit = true;
            } else if (args[i].startsWith("timeout=")) {
                timeout = Duration.parse(args[i].substring("timeout=".length()));
            }
        }
        try (LockProvider provider = LockProvider.open(uri)) {
            DistributedLock lock;
            if (mode.equals("shared")) {
                lock = provider.readWriteLock(name).readLock();
            } else if (mode.startsWith("permit:")) {
                lock = provider.semaphore(name, Integer.parseInt(mode.substring(7)));
            } else {
                lock = provider.lock(name);
            }
            try (LockHandle handle = lock.acquire(timeout)) {
                System.out.println("HELD " + handle.fencingToken());
                System.out.flush();
                if (exit) {
                    System.exit(0);
                }
                InputStream in = System.in;
                while (in.read() >= 0) {
                    // hold until the parent closes our stdin
                }
            }
            System.out.println("RELEASED");
            System.out.flush();
        }
    }
}
