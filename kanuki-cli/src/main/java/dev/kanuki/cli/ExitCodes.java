package dev.kanuki.cli;

import java.util.LinkedHashMap;
import java.util.Map;

/** The exit codes of the {@code kanuki} command, listed in {@code kanuki --help}. */
final class ExitCodes {
    /** Success (for {@code run}: the command's own exit code is passed through instead). */
    static final int OK = 0;
    /** {@code torture} found lost updates, overlaps, fencing violations or failed workers. */
    static final int TORTURE_FAILED = 1;
    /** Bad option, duration, lock name or backend URI; {@code status} without names on a backend that cannot list. */
    static final int USAGE = 2;
    /**
     * The backend failed, or cannot do what was asked ({@code break} on kernel locks: stop the
     * holder instead), or the torture workers could not be started.
     */
    static final int BACKEND = 3;
    /** A bug in kanuki; {@code --debug} prints the stack trace. */
    static final int INTERNAL = 70;
    /**
     * The lock is held by someone else (EX_TEMPFAIL): {@code run} could not take it
     * ({@code --conflict-exit-code} changes the code), or {@code break} found it live without {@code --force}.
     */
    static final int BUSY = 75;
    /**
     * {@code run} lost its lock while the command ran (or found it lost before releasing it),
     * whatever the command returned; one line on standard error says when and who holds it now.
     */
    static final int LOCK_LOST = 76;
    /**
     * {@code run --max-time}: the command ran too long and was ended (SIGTERM, SIGKILL after
     * {@code --kill-after}); the lock was released once it was gone. 124 as {@code timeout(1)}.
     */
    static final int MAX_TIME = 124;
    /** The command given to {@code run} could not be started. */
    static final int COMMAND_NOT_FOUND = 127;

    /** @return the codes and their meaning, for the "Exit codes" section of every help page */
    static Map<String, String> help() {
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put(Integer.toString(OK), "success (break: also when there was nothing to break); for run, the exit "
                + "code of CMD (128+N when CMD died of signal N)");
        codes.put(Integer.toString(TORTURE_FAILED), "torture found lost updates, overlaps or fencing violations");
        codes.put(Integer.toString(USAGE), "usage error: bad option, duration, lock name or backend URI; status "
                + "without NAME on a backend that cannot list its locks");
        codes.put(Integer.toString(BACKEND), "backend error, or the backend cannot do this (break on os locks: "
                + "stop the holder); the message says what to do");
        codes.put(Integer.toString(INTERNAL), "internal error: a bug in kanuki (--debug prints its stack trace)");
        codes.put(Integer.toString(BUSY), "the lock is busy (run; see --conflict-exit-code), or live "
                + "(break without --force)");
        codes.put(Integer.toString(LOCK_LOST), "run lost its lock while CMD ran (CMD got --on-lost), or found "
                + "it lost when CMD exited");
        codes.put(Integer.toString(MAX_TIME), "run --max-time: CMD ran too long and was ended (SIGTERM, then "
                + "SIGKILL after --kill-after); the lock was released once it was gone");
        codes.put(Integer.toString(COMMAND_NOT_FOUND), "run could not start CMD");
        return codes;
    }

    private ExitCodes() {
    }
}
