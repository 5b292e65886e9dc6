package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;

import java.util.List;

/**
 * The set rows behind the fence: every read and write checks the token bound for the row's resource
 * ({@code set:<row>}) in the store, atomically with the statement and in the caller's transaction. The read is
 * fenced too: its check takes the fence row's lock for the rest of the transaction, so no holder with a smaller
 * token can commit between this read and this write (a read outside the fence could see the set before a zombie's
 * accepted write and then overwrite it with a larger token). {@link WritesOnly} fences the write alone, to measure
 * that difference.
 */
public class FencedSetRows implements SetRows {

    private final SetRows rows;

    public FencedSetRows(SetRows rows) {
        this.rows = rows;
    }

    @Fenced(resource = ClientMain.RESOURCE, key = "#row")
    @Override
    public List<Long> read(int row) {
        return rows.read(row);
    }

    @Fenced(resource = ClientMain.RESOURCE, key = "#row")
    @Override
    public void write(int row, List<Long> elements) {
        rows.write(row, elements);
    }

    /** The write fenced, the read not: the check comes only after the read. */
    public static class WritesOnly implements SetRows {
        private final SetRows rows;

        public WritesOnly(SetRows rows) {
            this.rows = rows;
        }

        @Override
        public List<Long> read(int row) {
            return rows.read(row);
        }

        @Fenced(resource = ClientMain.RESOURCE, key = "#row")
        @Override
        public void write(int row, List<Long> elements) {
            rows.write(row, elements);
        }
    }
}
