package dev.fencing.it.weavingreactive;

import dev.fencing.annotation.Fenced;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A woven class whose fenced method returns a Mono: the aspect proceeds on each subscription, not on the call. */
public class WovenReactiveLedger {

    public final List<String> bodies = new CopyOnWriteArrayList<>();

    @Fenced(resource = "woven-reactive", key = "#id")
    public Mono<String> append(long id, String entry) {
        bodies.add(entry);
        return Mono.fromSupplier(() -> entry);
    }
}
