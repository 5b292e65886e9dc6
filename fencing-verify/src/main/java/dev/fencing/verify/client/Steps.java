package dev.fencing.verify.client;

import dev.fencing.token.FencingToken;

/**
 * What one operation tells its recorder as it goes, in this order: the lock was granted, the data was read (the
 * window a pause turns into a zombie begins), the write is about to be sent (once it has returned, a failure
 * leaves the outcome unknown). A workload without a read still calls {@link #read()} where its pause window begins.
 */
public interface Steps {

    /** The lock was granted with {@code token}; the critical section begins. */
    void acquired(FencingToken token);

    /** The data was read; the write comes next. */
    void read();

    /** The write is about to be sent. */
    void writing();

    /**
     * The write statement returned; only the commit (and the lock's release) remain. A failure before this point
     * rolled the transaction back; from here on the outcome of a failure is unknown.
     */
    void written();
}
