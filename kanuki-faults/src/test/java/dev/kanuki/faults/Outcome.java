package dev.kanuki.faults;

/**
 * One cell of the fault table.
 *
 * @param verdict what happened, judged against the backend's documented behaviour
 * @param recoveryMillis how long until another process held the lock, or -1
 * @param detail what was seen, in words
 */
record Outcome(Verdict verdict, long recoveryMillis, String detail) {
    /** The three answers the table gives. */
    enum Verdict {
        /** Mutual exclusion and fencing held; recovery within the documented bound. */
        HELD("held"),
        /** A guarantee broke the way the backend's page says it does under this fault. */
        DOCUMENTED("violated as documented"),
        /** A guarantee broke in a way nobody documented: a bug. */
        UNEXPECTED("VIOLATED UNEXPECTEDLY");

        final String words;

        Verdict(String words) {
            this.words = words;
        }
    }

    static Outcome held(long recoveryMillis, String detail) {
        return new Outcome(Verdict.HELD, recoveryMillis, detail);
    }

    static Outcome unexpected(long recoveryMillis, String detail) {
        return new Outcome(Verdict.UNEXPECTED, recoveryMillis, detail);
    }
}
