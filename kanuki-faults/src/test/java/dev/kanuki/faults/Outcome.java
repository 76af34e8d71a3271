package dev.kanuki.faults;

/**
 * One cell of the fault table.
 *
 * @param verdict what happened, judged against the backend's documented behaviour
 * @param recoveryMillis how long until another process held the lock, or -1
 * @param detail what was seen, in words
 */
record Outcome(Verdict verdict, long recoveryMillis, String detail) {
    /** The answers the table gives. */
    enum Verdict {
        /** The fault does not apply to this backend (the detail says why). */
        NOT_APPLICABLE("n/a"),
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

    /** @param reason why the backend's page says this breaks, and what was measured */
    static Outcome documented(long recoveryMillis, String reason) {
        return new Outcome(Verdict.DOCUMENTED, recoveryMillis, reason);
    }

    static Outcome unexpected(long recoveryMillis, String detail) {
        return new Outcome(Verdict.UNEXPECTED, recoveryMillis, detail);
    }

    static Outcome notApplicable(String why) {
        return new Outcome(Verdict.NOT_APPLICABLE, -1, why);
    }
}
