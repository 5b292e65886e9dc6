package dev.fencing.it.weavinggeneric;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A woven generic class whose fenced method a subclass overrides for its type argument
 * ({@link WovenGenericOverride}).
 */
public class WovenGenericBase<T> {

    public final List<Object> puts = new CopyOnWriteArrayList<>();

    @Fenced(resource = "woven-generic")
    public void put(T value) {
        puts.add(value);
    }
}
