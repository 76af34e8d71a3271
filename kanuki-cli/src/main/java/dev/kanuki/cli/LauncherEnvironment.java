package dev.kanuki.cli;

import java.util.Map;

/**
 * Undoes, for the commands kanuki starts, what the {@code bin/kanuki} launcher changed in the
 * environment for the JVM. The launcher runs the JVM under {@code LC_ALL=C.UTF-8}, so that file
 * names and arguments pass through Java as UTF-8 whatever the user's locale, and keeps the
 * user's own {@code LC_ALL} in {@value #ORIGINAL_LC_ALL}: {@code set:VALUE}, or {@code unset}.
 */
final class LauncherEnvironment {
    /** The variable in which the launcher keeps the user's {@code LC_ALL}. */
    static final String ORIGINAL_LC_ALL = "KANUKI_ORIG_LC_ALL";

    private LauncherEnvironment() {
    }

    /**
     * Gives a child process the locale the user had before the launcher changed it.
     *
     * @param env a child process's environment, changed in place
     */
    static void restore(Map<String, String> env) {
        String saved = env.remove(ORIGINAL_LC_ALL);
        if (saved == null) {
            return;
        }
        if (saved.startsWith("set:")) {
            env.put("LC_ALL", saved.substring("set:".length()));
        } else {
            env.remove("LC_ALL");
        }
    }
}
