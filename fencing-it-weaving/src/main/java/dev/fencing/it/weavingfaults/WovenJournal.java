package dev.fencing.it.weavingfaults;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Implements the type-level annotated interface; weaving cannot see that annotation. */
public class WovenJournal implements FencedJournal {

    public final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public void record(String line) {
        lines.add(line);
    }

    @Override
    public String toString() {
        return "WovenJournal" + lines;
    }
}
