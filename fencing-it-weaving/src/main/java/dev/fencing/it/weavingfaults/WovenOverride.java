package dev.fencing.it.weavingfaults;

/**
 * Overrides a fenced method without repeating {@code @Fenced}: weaving sees no annotation on the executing method, so
 * the override runs unfenced unless a startup check refuses it.
 */
public class WovenOverride extends WovenBase {

    @Override
    public void put(String value) {
        puts.add("override " + value);
    }
}
