package dev.fencing.verify.nemesis;

import dev.fencing.verify.history.NemesisEvent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * Runs the enabled nemeses one at a time: waits a random interval, strikes one, and again, until interrupted. The
 * order is random but each enabled nemesis strikes once per round (a shuffled bag), so a short run with pause and
 * kill gets as many pauses as kills rather than, by bad luck, none. A strike in progress heals its fault before the
 * thread ends.
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
        List<Nemesis> bag = new ArrayList<>();
        try {
            while (!Thread.currentThread().isInterrupted()) {
                if (bag.isEmpty()) {
                    bag.addAll(nemeses);
                    Collections.shuffle(bag, random);
                }
                long span = maxInterval.toMillis() - minInterval.toMillis();
                Thread.sleep(minInterval.toMillis() + (span > 0 ? random.nextLong(span + 1) : 0));
                Nemesis nemesis = bag.remove(bag.size() - 1);
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
