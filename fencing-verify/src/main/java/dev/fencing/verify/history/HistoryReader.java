package dev.fencing.verify.history;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a history file written by {@link HistoryWriter}. Blank lines are skipped. A last line without its line
 * break that does not parse is what a killed writer leaves: it is dropped and counted in
 * {@link History#truncatedLines()}. Any other unreadable line is an error naming its line number, and so is an
 * operation event that contradicts the others: a second invocation or a second completion of one
 * {@code (process, index)}, or a completion whose operation was never invoked (the checks pair events by that key,
 * so such a line would silently replace or hide an outcome), a completion whose monotonic time is before its
 * invocation's (the checks order events by it), or a second commit row with one {@code seq}.
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
        Map<List<Long>, Integer> invoked = new HashMap<>();
        Map<List<Long>, Integer> completed = new LinkedHashMap<>();
        Map<List<Long>, Op> ops = new HashMap<>();            // key and invoke or completion -> the event
        Map<Long, Integer> seqs = new HashMap<>();
        int truncated = 0;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty()) {
                continue;
            }
            boolean lastWithoutBreak = i == lines.length - 1;
            HistoryEvent event;
            try {
                event = HistoryJson.fromLine(line);
            } catch (IllegalArgumentException e) {
                if (lastWithoutBreak) {
                    truncated++;
                    continue;
                }
                throw new IllegalArgumentException("history line " + (i + 1) + ": " + e.getMessage(), e);
            }
            if (event instanceof Op op) {
                Map<List<Long>, Integer> seen = op.type().isCompletion() ? completed : invoked;
                Integer earlier = seen.putIfAbsent(List.of((long) op.process(), op.index()), i + 1);
                if (earlier != null) {
                    throw new IllegalArgumentException("history line " + (i + 1) + ": a second "
                            + (op.type().isCompletion() ? "completion" : "invocation") + " of process "
                            + op.process() + " op " + op.index() + " (the first is on line " + earlier + ")");
                }
                ops.put(List.of((long) op.process(), op.index(), op.type().isCompletion() ? 1L : 0L), op);
            } else if (event instanceof CommitRow row) {
                Integer earlier = seqs.putIfAbsent(row.seq(), i + 1);
                if (earlier != null) {
                    throw new IllegalArgumentException("history line " + (i + 1) + ": a second commit row with seq "
                            + row.seq() + " (the first is on line " + earlier + ")");
                }
            }
            events.add(event);
        }
        for (Map.Entry<List<Long>, Integer> completion : completed.entrySet()) {
            if (!invoked.containsKey(completion.getKey())) {
                throw new IllegalArgumentException("history line " + completion.getValue() + ": a completion of "
                        + "process " + completion.getKey().get(0) + " op " + completion.getKey().get(1)
                        + " that was never invoked");
            }
            Op invoke = ops.get(List.of(completion.getKey().get(0), completion.getKey().get(1), 0L));
            Op done = ops.get(List.of(completion.getKey().get(0), completion.getKey().get(1), 1L));
            if (done.mono() < invoke.mono()) {
                throw new IllegalArgumentException("history line " + completion.getValue() + ": process "
                        + done.process() + " op " + done.index() + " completed (mono " + done.mono()
                        + ") before it was invoked (mono " + invoke.mono() + ")");
            }
        }
        return new History(events, truncated);
    }
}
