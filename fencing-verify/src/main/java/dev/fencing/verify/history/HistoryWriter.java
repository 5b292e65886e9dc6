package dev.fencing.verify.history;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends events to a history file, one JSON line each. Thread-safe: each line is written whole under a lock and
 * handed to the operating system before {@link #write} returns, so a process killed at any point loses at most
 * the line it was writing (which {@link HistoryReader} then drops). Opening appends to an existing file.
 */
public final class HistoryWriter implements AutoCloseable {

    private final OutputStream out;

    private HistoryWriter(OutputStream out) {
        this.out = out;
    }

    /** A writer appending to {@code file}, created if missing (its directory must exist). */
    public static HistoryWriter open(Path file) throws IOException {
        return new HistoryWriter(Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                StandardOpenOption.WRITE));
    }

    /**
     * Writes {@code event} as one line and flushes it.
     *
     * @throws UncheckedIOException when the file cannot be written
     */
    public void write(HistoryEvent event) {
        byte[] line = (HistoryJson.toLine(event) + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (this) {
            try {
                out.write(line);
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot write the history", e);
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
