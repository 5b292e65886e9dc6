package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

/**
 * A type-level keyed {@code @Fenced} over methods of seven parameters and more: the key (each method's {@code id})
 * first, last, and past twelve parameters.
 */
@Fenced(resource = "woven-wide-rows", key = "#id")
public class WovenWideRows {

    public String first(long id, String a, String b, String c, String d, String e, String f) {
        return id + a + b + c + d + e + f;
    }

    public String last(String a, String b, String c, String d, String e, String f, long id) {
        return a + b + c + d + e + f + id;
    }

    public String lastOfThirteen(String a, String b, String c, String d, String e, String f, String g, String h,
            String i, String j, String k, String l, long id) {
        return a + b + c + d + e + f + g + h + i + j + k + l + id;
    }
}
