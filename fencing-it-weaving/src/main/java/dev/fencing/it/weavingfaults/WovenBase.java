package dev.fencing.it.weavingfaults;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A woven class whose fenced method a subclass overrides without repeating {@code @Fenced} ({@link WovenOverride}). */
public class WovenBase {

    public final List<String> puts = new CopyOnWriteArrayList<>();

    @Fenced(resource = "woven-base")
    public void put(String value) {
        puts.add(value);
    }
}
