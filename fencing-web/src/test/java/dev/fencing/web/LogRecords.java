package dev.fencing.web;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * For this module's tests: what a class's logger (commons-logging and {@code System.Logger} write to
 * java.util.logging here) logs from {@link #of} until {@link #close()}. As fencing-core's and fencing-spring's
 * test helpers of the same shape.
 */
public final class LogRecords extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogRecords(Logger logger) {
        this.logger = logger;
    }

    /** Starts capturing what {@code type}'s logger (named after the class) logs. */
    public static LogRecords of(Class<?> type) {
        LogRecords capture = new LogRecords(Logger.getLogger(type.getName()));
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
