package dev.fencing.guard;

import dev.fencing.store.FencedCall;

import java.util.Arrays;

/**
 * Tells the guard whether a store started the guarded write, without allocating per call: each thread keeps one
 * reusable {@link Frame} per nesting depth of fenced checks, handed to the store in place of the call and marked when
 * the store runs it. Frames are entered and exited in strict nesting on their thread.
 */
final class WriteFrames {

    private static final ThreadLocal<WriteFrames> CURRENT = ThreadLocal.withInitial(WriteFrames::new);

    private Frame[] frames = new Frame[4];
    private int depth;

    private WriteFrames() {
    }

    /** A frame wrapping {@code call} for a check at the next depth on this thread; exit it in a finally block. */
    static Frame enter(FencedCall<?> call) {
        WriteFrames writes = CURRENT.get();
        if (writes.depth == writes.frames.length) {
            writes.frames = Arrays.copyOf(writes.frames, writes.depth * 2);
        }
        Frame frame = writes.frames[writes.depth];
        if (frame == null) {
            frame = new Frame(writes);
            writes.frames[writes.depth] = frame;
        }
        writes.depth++;
        frame.call = call;
        frame.started = false;
        return frame;
    }

    /** The guarded call as handed to the store, remembering whether the store started it. */
    static final class Frame implements FencedCall<Object> {
        private final WriteFrames owner;
        private FencedCall<?> call;
        private boolean started;

        private Frame(WriteFrames owner) {
            this.owner = owner;
        }

        @Override
        public Object proceed() throws Throwable {
            FencedCall<?> current = call;
            if (current == null) {
                throw new IllegalStateException("The fence store ran the guarded write after its check returned");
            }
            started = true;
            return current.proceed();
        }

        /** Whether the store has started the write. */
        boolean started() {
            return started;
        }

        /** Releases this frame for reuse; the store can no longer run the write through it. */
        void exit() {
            call = null;
            owner.depth--;
        }

        @SuppressWarnings("unchecked")
        <T> FencedCall<T> typed() {
            return (FencedCall<T>) this;
        }
    }
}
