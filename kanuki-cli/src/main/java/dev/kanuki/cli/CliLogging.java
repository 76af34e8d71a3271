package dev.kanuki.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The {@code kanuki} command's SLF4J binding: the library's warnings and errors as one line each
 * on standard error, {@code kanuki: warning: MESSAGE: CAUSE}, without a stack trace; under
 * {@code --debug} also the debug and info messages, and stack traces. The client libraries'
 * own messages (ZooKeeper's, Netty's, a JDBC driver's: their retries and reconnections) are shown
 * only under {@code --debug}: the command reports what came of them in its own one line.
 */
public final class CliLogging implements SLF4JServiceProvider {
    private static volatile boolean debug;
    /** Loggers whose warnings a command reports itself, in its own words (printed with --debug). */
    private static final java.util.Set<String> QUIET = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Silences one logger's warnings, for a command that reports the same event itself.
     *
     * @param loggerName the logger, e.g. a class name
     */
    static void quiet(String loggerName) {
        QUIET.add(loggerName);
    }

    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();
    private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();
    private final ILoggerFactory factory = name -> loggers.computeIfAbsent(name, LineLogger::new);

    /** Used by SLF4J. */
    public CliLogging() {
    }

    /** Logs debug and info messages, and stack traces, from now on. */
    static void enableDebug() {
        setDebug(true);
    }

    /** @param on whether debug and info messages and stack traces are logged */
    static void setDebug(boolean on) {
        debug = on;
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // nothing to set up
    }

    /** One logger; all of them print the same way. */
    private static final class LineLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;

        /** Whether the logger is kanuki's own rather than a client library's. */
        private final boolean ours;

        LineLogger(String name) {
            this.name = name;
            this.ours = name.startsWith("dev.kanuki.");
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return debug;
        }

        @Override
        public boolean isInfoEnabled() {
            return debug;
        }

        @Override
        public boolean isWarnEnabled() {
            return debug || (ours && !QUIET.contains(name));
        }

        @Override
        public boolean isErrorEnabled() {
            return debug || ours;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                                   Throwable throwable) {
            String message = MessageFormatter.basicArrayFormat(pattern, arguments);
            String what = level == Level.WARN ? "warning" : level.name().toLowerCase(java.util.Locale.ROOT);
            StringBuilder line = new StringBuilder("kanuki: ").append(what).append(": ").append(message);
            if (throwable != null && !debug) {
                line.append(": ").append(throwable.getMessage() != null ? throwable.getMessage() : throwable.toString());
            }
            // One write of the whole message, stack trace included: it is not interleaved with
            // another thread's, and no lock is held around the output (a virtual thread blocked
            // writing inside synchronized would pin its carrier on JDK 21 to 23).
            StringWriter text = new StringWriter();
            text.append(Display.escapeControls(KanukiCli.oneLine(line.toString()))).append(System.lineSeparator());
            if (throwable != null && debug) {
                throwable.printStackTrace(new PrintWriter(text));
            }
            PrintStream err = System.err;
            err.print(text);
            err.flush();
        }
    }
}
