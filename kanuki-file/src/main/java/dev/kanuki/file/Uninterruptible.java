package dev.kanuki.file;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * Runs file I/O that must not be lost to an interrupt: a release, or a waiter's removal from a
 * queue. A {@code FileChannel} is interruptible: an interrupt of the thread using it (or one
 * already pending when it starts) closes the channel and fails the call with
 * {@link ClosedByInterruptException}, so an interrupted waiter could not write its removal and
 * the next acquirer waited out its lease. Such work is done on the calling thread when it is not
 * interrupted (the usual case costs nothing), and otherwise (interrupted before, or during, the
 * work) done again on a thread of its own, which nobody interrupts, while the caller waits for it
 * without giving up; the caller's interrupt is kept for it to see afterwards. The work must be
 * safe to run again after a partial run (appending a line twice, removing what is gone).
 */
final class Uninterruptible {
    private Uninterruptible() {
    }

    /** File work that may throw. */
    @FunctionalInterface
    interface Work<T> {
        T run() throws IOException;
    }

    static <T> T run(Work<T> work) throws IOException {
        if (!Thread.currentThread().isInterrupted()) {
            try {
                return work.run();
            } catch (IOException | RuntimeException e) {
                if (!Thread.currentThread().isInterrupted()) {
                    throw e;
                }
                // interrupted in the middle (a ClosedByInterruptException, perhaps wrapped): done again below
            }
        }
        FutureTask<T> task = new FutureTask<>(work::run);
        Thread worker = new Thread(task, "kanuki-file-uninterruptible");
        worker.setDaemon(true);
        worker.start();
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    // the work goes on regardless; the interrupt is restored for the caller below
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof IOException io) {
                        throw io;
                    }
                    if (cause instanceof RuntimeException re) {
                        throw re;
                    }
                    if (cause instanceof Error error) {
                        throw error;
                    }
                    throw new IOException(cause);
                }
            }
        } finally {
            Thread.currentThread().interrupt(); // we came here because of an interrupt: the caller's to see
        }
    }
}
