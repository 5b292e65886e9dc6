package dev.fencing.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * For tests: what a java.util.logging logger (and the loggers below it) logs from {@link #of} until {@link #close()}.
 * {@code System.Logger} writes there by default, and commons-logging does where no other backend is on the class
 * path. Capture by class for one class's lines, by name for a package's.
 */
public final class LogRecords extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogRecords(Logger logger) {
        this.logger = logger;
    }

    /** Starts capturing what {@code type}'s logger (named after the class) logs. */
    public static LogRecords of(Class<?> type) {
        return of(type.getName());
    }

    /** Starts capturing what the logger named {@code name}, and every logger below it, logs. */
    public static LogRecords of(String name) {
        LogRecords capture = new LogRecords(Logger.getLogger(name));
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
