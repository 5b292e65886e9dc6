package dev.fencing.it.ctw;

import dev.fencing.it.weaving.WeavingContract;
import dev.fencing.it.weaving.WovenArities;
import dev.fencing.it.weaving.WovenWide;
import dev.fencing.it.weaving.WovenWideRows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

import java.io.InputStream;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The weaving contract over fixtures woven by ajc at build time, and what ajc wove into their bytecode. */
class CompileTimeWeavingTest extends WeavingContract {

    /**
     * A keyed method of no parameter up to twelve builds no AspectJ join point per call (its advice has the arguments
     * without one: 128 B or more a call otherwise); one of thirteen still does, which shows the test reads the woven
     * class.
     */
    @Test
    @Timeout(10)
    void keyedMethodsUpToTwelveParametersBuildNoJoinPoint() throws Exception {
        Set<String> woven = new TreeSet<>();
        Set<String> building = new TreeSet<>();
        read(WovenArities.class, woven, building);
        assertThat(woven).as("methods that reach the aspect").contains("none", "one", "secondOfTwo", "nameOfTwo",
                "spelOverTwo", "firstOfThree", "thirdOfThree", "fourthOfFour", "firstOfFive", "spelOverFive",
                "sixthOfSix", "intOfFour", "seventhOfSeven", "firstOfEight", "sixthOfSeven", "spelOverSeven",
                "twelfthOfTwelve", "thirteenthOfThirteen");
        assertThat(building).as("methods that build a join point").containsExactly("thirteenthOfThirteen");
        woven.clear();
        building.clear();
        read(WovenWide.class, woven, building);
        read(WovenWideRows.class, woven, building);
        assertThat(woven).as("methods that reach the aspect").contains("seventhOfEight", "eighthOfNine",
                "ninthOfTen", "seventhOfEleven", "overSecondAndEleventhOfTwelve", "failingOfSeven", "firstOfThirteen",
                "lastOfThirteen", "first", "last");
        assertThat(building).as("methods that build a join point")
                .containsExactly("firstOfThirteen", "lastOfThirteen");
    }

    /**
     * A keyed method of four to twelve parameters returning an {@code int}, {@code long}, {@code float} or
     * {@code double} has a routing advice of that type, so nothing boxes its result (24 B a call past the box cache
     * otherwise). With no primitive parameter either, its woven code boxes nothing at all; a method with primitive
     * parameters does (they are bound as Objects), which shows the test reads the woven class.
     */
    @Test
    @Timeout(10)
    void primitiveResultsOfKeyedMethodsOfFourToTwelveParametersAreNotBoxed() throws Exception {
        Set<String> boxing = new TreeSet<>();
        readCalls(WovenArities.class, (caller, owner, method) -> {
            boolean conversion = owner.equals("org/aspectj/runtime/internal/Conversions") && method.endsWith("Object");
            boolean valueOf = owner.startsWith("java/lang/") && method.equals("valueOf");
            if (conversion || valueOf) {
                boxing.add(caller.replaceAll("_aroundBody\\d+.*$", "")); // the woven method's own helpers too
            }
        });
        assertThat(boxing).as("methods whose woven code boxes").contains("intOfFour", "firstOfEight")
                .doesNotContain("longOfFour", "floatOfFive", "doubleOfSix", "intOfNine", "floatOfTwelve",
                        "doubleOfTen");
    }

    /** Adds to {@code woven} the methods of {@code type} that call the aspect, to {@code building} the makeJP ones. */
    private static void read(Class<?> type, Set<String> woven, Set<String> building) throws Exception {
        readCalls(type, (caller, owner, method) -> {
            if (owner.equals("org/aspectj/runtime/reflect/Factory") && method.equals("makeJP")) {
                building.add(caller);
            }
            if (owner.equals("dev/fencing/aspectj/FencingAspect") && method.equals("aspectOf")) {
                woven.add(caller);
            }
        });
    }

    /** A method call in a class file: the calling method's name, the called method's owner and name. */
    private interface Call {
        void seen(String caller, String owner, String method);
    }

    /** Reports every method call in the (woven) class file of {@code type} to {@code call}. */
    private static void readCalls(Class<?> type, Call call) throws Exception {
        try (InputStream in = type.getResourceAsStream(type.getSimpleName() + ".class")) {
            new ClassReader(in).accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                        String[] exceptions) {
                    return new MethodVisitor(Opcodes.ASM9) {
                        @Override
                        public void visitMethodInsn(int opcode, String owner, String method, String desc,
                                boolean isInterface) {
                            call.seen(name, owner, method);
                        }
                    };
                }
            }, 0);
        }
    }
}
