package dev.cdcjoin.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cdcjoin.flink.codec.CdcSchema;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.table.api.DataTypes;
import org.junit.jupiter.api.Test;

/**
 * What a join declaration derives from its inputs and projection ({@link JoinDefinition}): a
 * two-table {@link JoinSpec} is the multi-way {@link MultiJoinSpec} of the same two inputs and one
 * step, in output names, types, null-padding and the columns each output column reads.
 */
class JoinDefinitionTest {

    private static final CdcSchema USERS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING().notNull())));

    private static final CdcSchema DOMAINS =
            CdcSchema.of(
                    DataTypes.ROW(
                            DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("user_id", DataTypes.BIGINT().notNull()),
                            DataTypes.FIELD("name", DataTypes.STRING())));

    private static final SideSpec LEFT =
            new SideSpec("users", USERS, List.of("id"), List.of("id"), null);

    private static final SideSpec RIGHT =
            new SideSpec("domains", DOMAINS, List.of("user_id"), List.of("id"), null);

    private static JoinSpec pair(JoinType type, int[] projection) {
        return new JoinSpec(LEFT, RIGHT, type, false, projection, null);
    }

    private static MultiJoinSpec multi(JoinType type, int[] projection) {
        return new MultiJoinSpec(List.of(LEFT, RIGHT), List.of(type), false, projection, null);
    }

    @Test
    void aTwoTableJoinDerivesWhatTheMultiWayJoinOfItsInputsDerives() {
        for (JoinType type : JoinType.values()) {
            for (int[] projection : new int[][] {null, {4, 1, 0}, {2, 3}}) {
                JoinSpec p = pair(type, projection);
                MultiJoinSpec m = multi(type, projection);
                String what = type + " " + (projection == null ? "all" : List.of(projection));
                assertArrayEquals(m.outputNames(), p.outputNames(), what);
                assertEquals(m.dataType(), p.dataType(), what);
                assertEquals(m.rowTypeInfo(), p.rowTypeInfo(), what);
                assertEquals(m.flinkRowsJson(), p.flinkRowsJson(), what);
                for (int i = 0; i < 2; i++) {
                    assertEquals(m.padded(i), p.padded(i), what + " input " + i);
                }
                for (int i = 0; i < p.outputNames().length; i++) {
                    assertEquals(m.inputOf(i), p.inputOf(i), what);
                    assertEquals(m.columnOf(i), p.columnOf(i), what);
                }
            }
        }
    }

    @Test
    void namesBothSidesHaveArePrefixedAndPaddedSidesAreNullable() {
        JoinSpec left = pair(JoinType.LEFT, null);
        assertEquals(
                List.of("users_id", "users_name", "domains_id", "user_id", "domains_name"),
                List.of(left.outputNames()));
        assertEquals(
                List.of(false, false, true, true, true),
                left.rowType().getChildren().stream()
                        .map(t -> t.isNullable())
                        .collect(Collectors.toList()));
        JoinSpec right = pair(JoinType.RIGHT, new int[] {1, 3});
        assertEquals(List.of("users_name", "user_id"), List.of(right.outputNames()));
        assertEquals(List.of(1, 1), List.of(right.columnOf(0), right.columnOf(1)));
        assertEquals(List.of(0, 1), List.of(right.inputOf(0), right.inputOf(1)));
        assertEquals(
                List.of(true, false),
                right.rowType().getChildren().stream()
                        .map(t -> t.isNullable())
                        .collect(Collectors.toList()));
    }

    @Test
    void inconsistentDeclarationsAreRefusedNamingWhy() {
        IllegalArgumentException range =
                assertThrows(
                        IllegalArgumentException.class, () -> pair(JoinType.INNER, new int[] {5}));
        assertEquals("projection index 5 out of range", range.getMessage());
        IllegalArgumentException names =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                new JoinSpec(
                                        LEFT,
                                        RIGHT,
                                        JoinType.INNER,
                                        false,
                                        new int[] {0},
                                        new String[] {"a", "b"}));
        assertEquals("need one output name per output column", names.getMessage());
        SideSpec wide =
                new SideSpec("domains", DOMAINS, List.of("user_id", "id"), List.of("id"), null);
        IllegalArgumentException keys =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> new JoinSpec(LEFT, wide, JoinType.INNER, false, null, null));
        assertTrue(
                keys.getMessage().contains("join keys differ in length: users and domains"),
                keys.getMessage());
    }

    /**
     * Output names must be unique (Flink's row types refuse duplicates, and a column read by name
     * must be one column): a collision is refused when the join is declared, naming the columns,
     * also where the default names collide ({@code users.id} is prefixed to {@code users_id}, the
     * other table's foreign key's name).
     */
    @Test
    void collidingOutputNamesAreRefusedNamingTheColumns() {
        SideSpec orders =
                new SideSpec(
                        "orders",
                        CdcSchema.of(
                                DataTypes.ROW(
                                        DataTypes.FIELD("id", DataTypes.BIGINT().notNull()),
                                        DataTypes.FIELD("users_id", DataTypes.BIGINT()))),
                        List.of("users_id"),
                        List.of("id"),
                        null);
        IllegalArgumentException defaults =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> new JoinSpec(LEFT, orders, JoinType.LEFT, false, null, null));
        assertEquals(
                "output column name 'users_id' is given to users.id and orders.users_id (a column"
                        + " name several inputs have is prefixed with its table's name); name them"
                        + " apart with select(column, outputName)",
                defaults.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        new MultiJoinSpec(
                                List.of(LEFT, orders), List.of(JoinType.LEFT), false, null, null));
        IllegalArgumentException chosen =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                CdcJoin.builder()
                                        .left("users", USERS, List.of("id"), List.of("id"))
                                        .right(
                                                "domains",
                                                DOMAINS,
                                                List.of("user_id"),
                                                List.of("id"))
                                        .select("users.name", "name")
                                        .select("domains.name", "name")
                                        .build());
        assertEquals(
                "output column name 'name' is given to users.name and domains.name; name them apart"
                        + " with select(column, outputName)",
                chosen.getMessage());
        String[] renamed =
                new JoinSpec(
                                LEFT,
                                orders,
                                JoinType.LEFT,
                                false,
                                null,
                                new String[] {"uid", "name", "oid", "user"})
                        .outputNames();
        assertArrayEquals(new String[] {"uid", "name", "oid", "user"}, renamed);
    }
}
