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
 * <p>Arguments: {@code URI NAME exclusive|shared|permit:N [exit]}. With {@code exit} it calls
 * {@code System.exit(0)} right after printing {@code HELD}, without closing anything, so that
 * only kanuki's shutdown hook can release the lock.
 */
public final class LockHolderMain {
    private LockHolderMain() {
    }

    /**
     * @param args URI, lock name, mode
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        String mode = args[2];
        try (LockProvider provider = LockProvider.open(uri)) {
            DistributedLock lock;
            if (mode.equals("shared")) {
                lock = provider.readWriteLock(name).readLock();
            } else if (mode.startsWith("permit:")) {
                lock = provider.semaphore(name, Integer.parseInt(mode.substring(7)));
            } else {
                lock = provider.lock(name);
            }
            try (LockHandle handle = lock.acquire(Duration.ofSeconds(60))) {
                System.out.println("HELD " + handle.fencingToken());
                System.out.flush();
                if (args.length > 3 && args[3].equals("exit")) {
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
