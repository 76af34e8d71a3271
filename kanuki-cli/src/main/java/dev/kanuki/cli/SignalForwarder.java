package dev.kanuki.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * While open, passes the signals it was given (e.g. SIGINT, SIGTERM, SIGHUP) received by this
 * JVM on to the command instead of ending the JVM, so that {@code kanuki run} keeps holding the
 * lock until the command has reacted and exited. SIGINT and SIGHUP that are not passed on are
 * still caught (the terminal delivers them to the command itself). Closing it restores the
 * JVM's own handlers.
 *
 * <p>Uses {@code sun.misc.Signal} (module jdk.unsupported): the JDK has no supported API for
 * catching signals. Signals the JVM reserves for itself are skipped.
 */
final class SignalForwarder implements AutoCloseable {
    private static final List<String> CAUGHT = List.of("INT", "TERM", "HUP");

    private final List<String> forwarded;
    private final List<Signal> signals = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();
    /** Signals received before the command was started, passed on once it is. */
    private final List<String> pending = new ArrayList<>();
    private Consumer<String> send;

    private SignalForwarder(List<String> forwarded) {
        this.forwarded = forwarded;
    }

    /**
     * Catches the signals before the command starts, so that none received while it starts
     * ends kanuki or is lost; {@link #attach} says where they go.
     *
     * @param forwarded the signals to pass on; the others of INT, TERM and HUP are caught and dropped
     * @return an open forwarder; close it once the command has exited
     */
    static SignalForwarder install(List<String> forwarded) {
        SignalForwarder forwarder = new SignalForwarder(forwarded);
        for (String name : CAUGHT) {
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

    /**
     * Starts passing signals on, first those received since {@link #install}.
     *
     * @param send sends a signal, by name (e.g. {@code TERM}), to the command
     */
    void attach(Consumer<String> send) {
        List<String> early;
        synchronized (this) {
            this.send = send;
            early = List.copyOf(pending);
            pending.clear();
        }
        early.forEach(send);
    }

    private void forward(Signal signal) {
        if (!forwarded.contains(signal.getName())) {
            return;
        }
        Consumer<String> target;
        synchronized (this) {
            target = send;
            if (target == null) {
                pending.add(signal.getName());
                return;
            }
        }
        target.accept(signal.getName());
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
