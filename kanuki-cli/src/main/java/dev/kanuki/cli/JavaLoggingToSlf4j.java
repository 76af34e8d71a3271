package dev.kanuki.cli;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kanuki} command's configuration of {@code java.util.logging}, named by the system
 * property {@code java.util.logging.config.class}: every record goes to the SLF4J logger of the
 * same name, so that a client library's messages (gRPC's "Epoll available…" at INFO, under etcd)
 * are shown like the other libraries' ones, only under {@code --debug}, instead of two lines of
 * the JDK's console format on every run. The library itself configures no global logging; only
 * the command does.
 */
public final class JavaLoggingToSlf4j {
    /** Used by {@link LogManager}, once, when java.util.logging is first used. */
    public JavaLoggingToSlf4j() {
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        // INFO and above are passed on; CliLogging decides what is shown. FINE and below would
        // cost the libraries' formatting for messages shown at most under --debug.
        root.setLevel(Level.INFO);
        root.addHandler(new ToSlf4j());
    }

    /** Passes each record to SLF4J at the nearest level. */
    private static final class ToSlf4j extends Handler {
        @Override
        public void publish(LogRecord record) {
            if (record == null) {
                return;
            }
            org.slf4j.Logger logger = LoggerFactory.getLogger(record.getLoggerName() == null ? "" : record.getLoggerName());
            String message = record.getMessage();
            if (record.getParameters() != null && record.getParameters().length > 0 && message != null) {
                try {
                    message = java.text.MessageFormat.format(message, record.getParameters());
                } catch (IllegalArgumentException e) {
                    // a message that is not a MessageFormat pattern: shown as it is
                }
            }
            int level = record.getLevel().intValue();
            if (level >= Level.SEVERE.intValue()) {
                logger.error(message, record.getThrown());
            } else if (level >= Level.WARNING.intValue()) {
                logger.warn(message, record.getThrown());
            } else if (level >= Level.INFO.intValue()) {
                logger.info(message, record.getThrown());
            } else {
                logger.debug(message, record.getThrown());
            }
        }

        @Override
        public void flush() {
            // nothing buffered
        }

        @Override
        public void close() {
            // nothing held
        }
    }
}
