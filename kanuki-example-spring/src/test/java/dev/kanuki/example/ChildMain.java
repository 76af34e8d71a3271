package dev.kanuki.example;

import java.io.IOException;

/**
 * Runs {@link ExampleApplication} in a JVM started by a test, and exits when the test's JVM goes
 * away: the test holds this process's standard input open, and its end (the test JVM died, even
 * by SIGKILL) stops the instance, so no instance outlives a crashed or timed-out test run.
 */
final class ChildMain {
    private ChildMain() {
    }

    /**
     * Starts the watcher of standard input, then the application.
     *
     * @param args the application's arguments
     */
    public static void main(String[] args) {
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; only the end of the stream matters
                }
            } catch (IOException e) {
                // the pipe broke: the parent is gone just the same
            }
            System.exit(0);
        }, "exit-with-parent");
        watcher.setDaemon(true);
        watcher.start();
        ExampleApplication.main(args);
    }
}
