package dev.kanuki.cli;

/**
 * Start-up work that {@code kanuki run} will need within milliseconds, done on a second thread
 * while the main thread reads the command line, so that a machine with a free processor does
 * it in parallel. Each step is one-time initialisation inside the JDK or inside kanuki that the
 * main thread would otherwise do itself a moment later; if the main thread gets there first it
 * simply waits for (or does) the same work, so the result is the same either way. Nothing here
 * touches a lock, a file or SLF4J's own start (which could hand out substitute loggers).
 */
final class StartupWarmup {
    private StartupWarmup() {
    }

    /**
     * Starts the warm-up when the command line is a {@code run}; other commands start as before.
     *
     * @param args the command line
     */
    static void startFor(String[] args) {
        if (args.length == 0 || !args[0].equals("run")) {
            return;
        }
        CommandProcess.prestart();
        // A Thread subclass, not a method reference: a lambda here would make the main thread set
        // up the invokedynamic machinery, the first thing this thread takes off it.
        Thread warmup = new Thread("kanuki-warmup") {
            @Override
            public void run() {
                warm();
            }
        };
        warmup.setDaemon(true);
        warmup.start();
    }

    private static void warm() {
        try {
            // The first lambda of the JVM sets up the invokedynamic machinery: milliseconds.
            Runnable lambda = () -> { };
            lambda.run();
            // SLF4J formats a line with String.format on its start, whatever the verbosity:
            // Formatter's class set-up compiles a regular expression.
            String.format("%s", "");
        } catch (RuntimeException | Error e) {
            // A warm-up that fails leaves the work to the main thread, which reports what it finds.
        }
    }
}
