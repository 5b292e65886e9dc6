package dev.fencing.it.weavinggeneric;

/**
 * Overrides a fenced generic method for its type argument ({@code put(String)}, through a bridge {@code put(Object)})
 * without repeating {@code @Fenced}: the override runs unfenced unless a startup check refuses it.
 */
public class WovenGenericOverride extends WovenGenericBase<String> {

    @Override
    public void put(String value) {
        puts.add("override " + value);
    }
}
