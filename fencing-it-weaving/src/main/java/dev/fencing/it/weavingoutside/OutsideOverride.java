package dev.fencing.it.weavingoutside;

import dev.fencing.it.weavingfaults.WovenBase;

/**
 * Overrides, without repeating {@code @Fenced}, a fenced method of a class in another package: the check of this
 * package alone must still find it (the supertype's class file is read), or the override runs unfenced.
 */
public class OutsideOverride extends WovenBase {

    @Override
    public void put(String value) {
        puts.add("outside " + value);
    }
}
