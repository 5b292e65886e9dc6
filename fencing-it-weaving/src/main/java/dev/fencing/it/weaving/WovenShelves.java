package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Type-level fences nested in each other: an unkeyed class enclosing a keyed one, so the weaving split between keyed
 * and unkeyed points must follow the class that declares each method, not the enclosing one.
 */
@Fenced(resource = "woven-shelves")
public class WovenShelves {

    public final List<String> labels = new CopyOnWriteArrayList<>();

    public void label(String text) {
        labels.add(text);
    }

    /** Keyed by its first argument. */
    @Fenced(resource = "woven-shelf", key = "#p0")
    public static class Shelf {

        public final List<String> items = new CopyOnWriteArrayList<>();

        public void put(String id) {
            items.add(id);
        }
    }
}
