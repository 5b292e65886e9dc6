package dev.fencing.verify.client;

import dev.fencing.annotation.Fenced;

/**
 * The log behind the fence: each append checks the token bound for its resource ({@code append:<row>}) and inserts
 * in the caller's transaction. The check holds the resource's fence row lock until that transaction ends, so the
 * appends of one resource are inserted, and numbered, in the order they commit.
 */
public class FencedAppendRows implements AppendRows {

    private final AppendRows rows;

    public FencedAppendRows(AppendRows rows) {
        this.rows = rows;
    }

    @Fenced(resource = AppendService.RESOURCE, key = "#row")
    @Override
    public void append(int row, String resource, long token, int process, long op) {
        rows.append(row, resource, token, process, op);
    }
}
