package dev.fencing.spring;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * For this module's tests: what a logger (and the loggers below it) logs from {@link #of} until {@link #close()}.
 * commons-logging writes to java.util.logging on this module's test classpath. As fencing-core's tests'
 * {@code LogCapture}, by logger name, so that a package's loggers can be captured at once.
 */
final class LogRecords extends Handler implements AutoCloseable {

    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogRecords(Logger logger) {
        this.logger = logger;
    }

    /** Starts capturing what the logger named {@code name} logs. */
    static LogRecords of(String name) {
        LogRecords capture = new LogRecords(Logger.getLogger(name));
        capture.logger.addHandler(capture);
        return capture;
    }

    /** The records so far, oldest first. */
    List<LogRecord> records() {
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
