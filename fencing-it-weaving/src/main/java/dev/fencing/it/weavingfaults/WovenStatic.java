package dev.fencing.it.weavingfaults;

import dev.fencing.annotation.Fenced;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A static fenced method: weaving refuses every call of it (a fence point is an instance method), and the startup
 * check of an ASPECTJ context whose packages hold it fails. Kept out of {@code dev.fencing.it.weaving}, whose
 * contexts must start.
 */
public final class WovenStatic {

    public static final List<String> STATIC_WRITES = new CopyOnWriteArrayList<>();

    private WovenStatic() {
    }

    @Fenced(resource = "woven-arity", key = "#id")
    public static long staticWrite(long id) {
        STATIC_WRITES.add("staticWrite " + id);
        return id;
    }
}
