package dev.kanuki.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * While open, sends SIGINT, SIGTERM and SIGHUP received by this JVM on to a child process
 * instead of ending the JVM, so that {@code kanuki run} keeps holding the lock until the child
 * has reacted and exited. Closing it restores the JVM's own handlers.
 *
 * <p>Uses {@code sun.misc.Signal} (module jdk.unsupported): the JDK has no supported API for
 * catching signals. Signals the JVM reserves for itself are skipped.
 */
final class SignalForwarder implements AutoCloseable {
    private static final String[] FORWARDED = {"INT", "TERM", "HUP"};

    private final Process child;
    private final List<Signal> signals = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();

    private SignalForwarder(Process child) {
        this.child = child;
    }

    /**
     * @param child the process to forward signals to
     * @return an open forwarder; close it once the child has exited
     */
    static SignalForwarder to(Process child) {
        SignalForwarder forwarder = new SignalForwarder(child);
        for (String name : FORWARDED) {
            try {
                Signal signal = new Signal(name);
                SignalHandler old = Signal.handle(signal, forwarder::forward);
                forwarder.signals.add(signal);
                forwarder.previous.add(old);
            } catch (IllegalArgumentException e) {
                // Unknown on this OS, or reserved by the JVM (e.g. with -Xrs): leave it alone.
            }
        }
        return forwarder;
    }

    private void forward(Signal signal) {
        if (!child.isAlive()) {
            return;
        }
        // ProcessHandle can only send TERM and KILL, so use kill(1) for the exact signal.
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal.getName(), Long.toString(child.pid()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0) {
                return;
            }
        } catch (IOException e) {
            // fall back below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (signal.getName().equals("TERM")) {
            child.destroy();
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < signals.size(); i++) {
            try {
                Signal.handle(signals.get(i), previous.get(i));
            } catch (IllegalArgumentException e) {
                // cannot happen for a signal we could install; nothing to restore
            }
        }
    }
}
