package dev.fencing.recovery;

import java.util.concurrent.atomic.AtomicLong;

/** ZooKeeper-like issued tokens for the reset's tests: one sequence for every resource, read as the reset reads it. */
final class OneSequence implements IssuedTokens {
    final AtomicLong zxid;
    Runnable afterRead = () -> { };

    OneSequence(long at) {
        this.zxid = new AtomicLong(at);
    }

    @Override
    public long highestIssued(String resource) {
        long now = zxid.get();
        afterRead.run(); // the ensemble moves on while the reset goes on
        return now;
    }

    @Override
    public boolean isHeld(String resource) {
        return false;
    }

    @Override
    public boolean oneSequence() {
        return true;
    }
}
