package dev.fencing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * For tests: the records a class logs through {@code System.Logger} (JUL by default) from {@link #of} until
 * {@link #close()}, which takes the handler off again.
 */
public final class LogCapture extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
    }

    /** Starts capturing what {@code type}'s logger (named after the class) logs. */
    public static LogCapture of(Class<?> type) {
        LogCapture capture = new LogCapture(Logger.getLogger(type.getName()));
        capture.logger.addHandler(capture);
        return capture;
    }

    /** The records so far, oldest first. */
    public List<LogRecord> records() {
        return records;
    }

    @Override
    public void publish(LogRecord record) {
        records.add(record);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
