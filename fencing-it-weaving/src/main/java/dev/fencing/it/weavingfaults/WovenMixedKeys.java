package dev.fencing.it.weavingfaults;

import dev.fencing.annotation.Fenced;

/** One resource fenced with and without a key: two locks and two max_seen for one data, refused at startup. */
public class WovenMixedKeys {

    @Fenced(resource = "woven-mixed")
    public void all() {
    }

    @Fenced(resource = "woven-mixed", key = "#id")
    public void one(String id) {
    }
}
