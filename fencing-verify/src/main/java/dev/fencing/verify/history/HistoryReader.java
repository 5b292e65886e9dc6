package dev.fencing.verify.history;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a history file written by {@link HistoryWriter}. Blank lines are skipped. A last line without its line
 * break that does not parse is what a killed writer leaves: it is dropped and counted in
 * {@link History#truncatedLines()}. Any other unreadable line is an error naming its line number.
 */
public final class HistoryReader {

    private HistoryReader() {
    }

    /**
     * The history in {@code file}.
     *
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when a line other than a partial last one is not a history event
     */
    public static History read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** The history in {@code text}, the content of a history file. */
    public static History parse(String text) {
        List<HistoryEvent> events = new ArrayList<>();
        int truncated = 0;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty()) {
                continue;
            }
            boolean lastWithoutBreak = i == lines.length - 1;
            try {
                events.add(HistoryJson.fromLine(line));
            } catch (IllegalArgumentException e) {
                if (lastWithoutBreak) {
                    truncated++;
                    continue;
                }
                throw new IllegalArgumentException("history line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        return new History(events, truncated);
    }
}
