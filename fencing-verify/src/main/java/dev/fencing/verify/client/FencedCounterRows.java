package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;

/**
 * The counter rows behind the fence: the read and the write each check the token bound for the row's resource
 * ({@code counter:<row>}) in the store, in the caller's transaction; the read's check holds the fence row's lock
 * until the transaction ends, so the read-increment-write is one step for the store. {@link WritesOnly} fences the
 * write alone ({@code --fence-reads off}).
 */
public class FencedCounterRows implements CounterRows {

    private final CounterRows rows;

    public FencedCounterRows(CounterRows rows) {
        this.rows = rows;
    }

    @Fenced(resource = CounterService.RESOURCE, key = "#row")
    @Override
    public long read(int row) {
        return rows.read(row);
    }

    @Fenced(resource = CounterService.RESOURCE, key = "#row")
    @Override
    public void write(int row, long value) {
        rows.write(row, value);
    }

    /** The write fenced, the read not. */
    public static class WritesOnly implements CounterRows {
        private final CounterRows rows;

        public WritesOnly(CounterRows rows) {
            this.rows = rows;
        }

        @Override
        public long read(int row) {
            return rows.read(row);
        }

        @Fenced(resource = CounterService.RESOURCE, key = "#row")
        @Override
        public void write(int row, long value) {
            rows.write(row, value);
        }
    }
}
