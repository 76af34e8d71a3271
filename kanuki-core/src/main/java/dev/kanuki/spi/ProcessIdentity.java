package dev.kanuki.spi;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * This process's identity as owner records show it, and the liveness check used to tell a
 * crashed holder from a live one on the same host.
 */
public final class ProcessIdentity {
    private static final long PID = ProcessHandle.current().pid();
    private static final String HOST = findHost();
    private static final long SALT = secureSalt();

    private ProcessIdentity() {
    }

    /** {@return this process's id} */
    public static long pid() {
        return PID;
    }

    /** {@return this machine's host name (from {@code HOSTNAME}, the kernel, or DNS, in that order)} */
    public static String host() {
        return HOST;
    }

    /**
     * {@return a random 128-bit id as 32 hex digits, unique across processes and hosts (mixed with
     *     a per-process secure salt, so two processes never draw the same sequence)}
     */
    public static String randomId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        HexFormat hex = HexFormat.of();
        return hex.toHexDigits(r.nextLong() ^ SALT) + hex.toHexDigits(r.nextLong() ^ PID);
    }

    /**
     * Tells whether a lock's owner is a process of this host that no longer exists.
     *
     * @param host the owner's host
     * @param pid the owner's process id
     * @return true only when the owner is on this host and no process with that pid exists
     */
    public static boolean isDeadLocalProcess(String host, long pid) {
        if (!HOST.equals(host) || pid <= 0) {
            return false;
        }
        return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
    }

    /**
     * @return 64 random bits from the kernel ({@code /dev/urandom}), else from {@link SecureRandom}:
     *     the kernel's are as good and spare a short-lived process the JCA provider start-up
     */
    private static long secureSalt() {
        try (java.io.InputStream in = new java.io.FileInputStream("/dev/urandom")) {
            byte[] bytes = in.readNBytes(8);
            if (bytes.length == 8) {
                return java.nio.ByteBuffer.wrap(bytes).getLong();
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not a Unix-like system: ask the JCA
        }
        return new SecureRandom().nextLong();
    }

    private static String findHost() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.trim();
        }
        try {
            java.nio.file.Path etc = java.nio.file.Path.of("/proc/sys/kernel/hostname");
            if (java.nio.file.Files.isReadable(etc)) {
                String name = java.nio.file.Files.readString(etc).trim();
                if (!name.isEmpty()) {
                    return name;
                }
            }
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }
}
