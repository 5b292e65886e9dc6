package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Runs the enabled nemeses one at a time in random order: waits a random interval, strikes one, and again, until
 * interrupted. A strike in progress heals its fault before the thread ends.
 */
public final class NemesisSchedule implements Runnable {

    private final List<Nemesis> nemeses;
    private final Targets targets;
    private final Random random;
    private final Duration minInterval;
    private final Duration maxInterval;
    private final Consumer<NemesisEvent> record;
    private final Consumer<Throwable> onError;

    public NemesisSchedule(List<Nemesis> nemeses, Targets targets, Random random, Duration minInterval,
                           Duration maxInterval, Consumer<NemesisEvent> record, Consumer<Throwable> onError) {
        this.nemeses = List.copyOf(nemeses);
        this.targets = targets;
        this.random = random;
        this.minInterval = minInterval;
        this.maxInterval = maxInterval;
        this.record = record;
        this.onError = onError;
    }

    @Override
    public void run() {
        if (nemeses.isEmpty()) {
            return;
        }
        try {
            while (!Thread.currentThread().isInterrupted()) {
                long span = maxInterval.toMillis() - minInterval.toMillis();
                Thread.sleep(minInterval.toMillis() + (span > 0 ? random.nextLong(span + 1) : 0));
                Nemesis nemesis = nemeses.get(random.nextInt(nemeses.size()));
                try {
                    nemesis.strike(targets, random, record);
                } catch (InterruptedException e) {
                    throw e;
                } catch (RuntimeException e) {
                    onError.accept(e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
