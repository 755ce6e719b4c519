
(define (problem plan_trial_T00002026_030000_000002)
    (:domain alfred)
    (:objects
        agent1 - agent
        DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57 - object
        Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60 - object
        Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72 - object
        Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92 - object
        Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14 - object
        Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28 - object
        CreditCard_bar__minus_02_dot_03_bar__plus_01_dot_20_bar__minus_01_dot_03 - object
        Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80 - object
        Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29 - object
        CreditCardType - otype
        DishSpongeType - otype
        EggType - otype
        ForkType - otype
        KnifeType - otype
        MugType - otype
        PlateType - otype
        PotType - otype
        TomatoType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        ShelfType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__plus_00_dot_24 - receptacle
        Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72 - receptacle
        Cabinet_bar__plus_00_dot_95_bar__plus_02_dot_16_bar__minus_02_dot_38 - receptacle
        CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_00_dot_21 - receptacle
        CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_02_dot_05 - receptacle
        CounterTop_bar__minus_01_dot_24_bar__plus_00_dot_97_bar__minus_00_dot_64 - receptacle
        Drawer_bar__plus_00_dot_64_bar__plus_00_dot_27_bar__minus_00_dot_65 - receptacle
        Drawer_bar__plus_00_dot_64_bar__plus_00_dot_55_bar__minus_00_dot_65 - receptacle
        Drawer_bar__plus_00_dot_64_bar__plus_00_dot_76_bar__minus_00_dot_65 - receptacle
        Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25 - receptacle
        GarbageCan_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_00_dot_58 - receptacle
        Microwave_bar__plus_01_dot_04_bar__plus_01_dot_68_bar__minus_01_dot_30 - receptacle
        Shelf_bar__minus_01_dot_69_bar__plus_00_dot_16_bar__plus_02_dot_72 - receptacle
        Shelf_bar__minus_01_dot_69_bar__plus_00_dot_54_bar__plus_02_dot_72 - receptacle
        Shelf_bar__minus_01_dot_69_bar__plus_00_dot_87_bar__plus_02_dot_72 - receptacle
        Sink_bar__minus_00_dot_70_bar__plus_00_dot_93_bar__minus_00_dot_65_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_0_bar_4_bar_3_bar_30 - location
        loc_bar_0_bar_5_bar_1_bar_0 - location
        loc_bar_0_bar__minus_3_bar_3_bar_30 - location
        loc_bar_0_bar__minus_4_bar_1_bar_30 - location
        loc_bar_0_bar__minus_6_bar_0_bar_30 - location
        loc_bar_0_bar__minus_8_bar_1_bar_30 - location
        loc_bar_1_bar__minus_1_bar_1_bar_30 - location
        loc_bar_1_bar__minus_5_bar_1_bar_0 - location
        loc_bar_1_bar__minus_8_bar_1_bar_30 - location
        loc_bar_1_bar__minus_8_bar_1_bar__minus_30 - location
        loc_bar__minus_1_bar_3_bar_1_bar_30 - location
        loc_bar__minus_3_bar__minus_8_bar_0_bar_30 - location
        loc_bar__minus_6_bar_6_bar_0_bar_30 - location
        loc_bar__minus_9_bar_6_bar_0_bar_30 - location
        loc_bar__minus_9_bar_7_bar_0_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__plus_00_dot_24 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__plus_00_dot_24 loc_bar__minus_1_bar_3_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__plus_00_dot_24)
        (receptacleType Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72 loc_bar_0_bar__minus_8_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72)
        (receptacleType Cabinet_bar__plus_00_dot_95_bar__plus_02_dot_16_bar__minus_02_dot_38 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_95_bar__plus_02_dot_16_bar__minus_02_dot_38 loc_bar_1_bar__minus_8_bar_1_bar__minus_30)
        (openable Cabinet_bar__plus_00_dot_95_bar__plus_02_dot_16_bar__minus_02_dot_38)
        (receptacleType CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_00_dot_21 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_00_dot_21 loc_bar_1_bar__minus_1_bar_1_bar_30)
        (receptacleType CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_02_dot_05 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_02_dot_05 loc_bar_1_bar__minus_8_bar_1_bar_30)
        (receptacleType CounterTop_bar__minus_01_dot_24_bar__plus_00_dot_97_bar__minus_00_dot_64 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_24_bar__plus_00_dot_97_bar__minus_00_dot_64 loc_bar__minus_3_bar__minus_8_bar_0_bar_30)
        (receptacleType Drawer_bar__plus_00_dot_64_bar__plus_00_dot_27_bar__minus_00_dot_65 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_64_bar__plus_00_dot_27_bar__minus_00_dot_65 loc_bar_0_bar__minus_6_bar_0_bar_30)
        (openable Drawer_bar__plus_00_dot_64_bar__plus_00_dot_27_bar__minus_00_dot_65)
        (receptacleType Drawer_bar__plus_00_dot_64_bar__plus_00_dot_55_bar__minus_00_dot_65 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_64_bar__plus_00_dot_55_bar__minus_00_dot_65 loc_bar_0_bar__minus_6_bar_0_bar_30)
        (openable Drawer_bar__plus_00_dot_64_bar__plus_00_dot_55_bar__minus_00_dot_65)
        (receptacleType Drawer_bar__plus_00_dot_64_bar__plus_00_dot_76_bar__minus_00_dot_65 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_64_bar__plus_00_dot_76_bar__minus_00_dot_65 loc_bar_0_bar__minus_4_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_64_bar__plus_00_dot_76_bar__minus_00_dot_65)
        (receptacleType Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25 FridgeType)
        (receptacleAtLocation Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25 loc_bar_0_bar_5_bar_1_bar_0)
        (openable Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25)
        (receptacleType GarbageCan_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_00_dot_58 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__minus_00_dot_95_bar__plus_00_dot_00_bar__plus_00_dot_58 loc_bar_0_bar_4_bar_3_bar_30)
        (receptacleType Microwave_bar__plus_01_dot_04_bar__plus_01_dot_68_bar__minus_01_dot_30 MicrowaveType)
        (receptacleAtLocation Microwave_bar__plus_01_dot_04_bar__plus_01_dot_68_bar__minus_01_dot_30 loc_bar_1_bar__minus_5_bar_1_bar_0)
        (openable Microwave_bar__plus_01_dot_04_bar__plus_01_dot_68_bar__minus_01_dot_30)
        (receptacleType Shelf_bar__minus_01_dot_69_bar__plus_00_dot_16_bar__plus_02_dot_72 ShelfType)
        (receptacleAtLocation Shelf_bar__minus_01_dot_69_bar__plus_00_dot_16_bar__plus_02_dot_72 loc_bar__minus_6_bar_6_bar_0_bar_30)
        (receptacleType Shelf_bar__minus_01_dot_69_bar__plus_00_dot_54_bar__plus_02_dot_72 ShelfType)
        (receptacleAtLocation Shelf_bar__minus_01_dot_69_bar__plus_00_dot_54_bar__plus_02_dot_72 loc_bar__minus_9_bar_6_bar_0_bar_30)
        (receptacleType Shelf_bar__minus_01_dot_69_bar__plus_00_dot_87_bar__plus_02_dot_72 ShelfType)
        (receptacleAtLocation Shelf_bar__minus_01_dot_69_bar__plus_00_dot_87_bar__plus_02_dot_72 loc_bar__minus_9_bar_7_bar_0_bar_30)
        (receptacleType Sink_bar__minus_00_dot_70_bar__plus_00_dot_93_bar__minus_00_dot_65_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__minus_00_dot_70_bar__plus_00_dot_93_bar__minus_00_dot_65_bar_SinkBasin loc_bar_0_bar__minus_3_bar_3_bar_30)
        (canContain CabinetType DishSpongeType)
        (canContain CabinetType MugType)
        (canContain CabinetType PlateType)
        (canContain CabinetType PotType)
        (canContain CounterTopType CreditCardType)
        (canContain CounterTopType DishSpongeType)
        (canContain CounterTopType EggType)
        (canContain CounterTopType ForkType)
        (canContain CounterTopType KnifeType)
        (canContain CounterTopType MugType)
        (canContain CounterTopType PlateType)
        (canContain CounterTopType PotType)
        (canContain CounterTopType TomatoType)
        (canContain DrawerType CreditCardType)
        (canContain DrawerType DishSpongeType)
        (canContain DrawerType ForkType)
        (canContain DrawerType KnifeType)
        (canContain FridgeType EggType)
        (canContain FridgeType MugType)
        (canContain FridgeType PlateType)
        (canContain FridgeType PotType)
        (canContain FridgeType TomatoType)
        (canContain GarbageCanType DishSpongeType)
        (canContain GarbageCanType EggType)
        (canContain GarbageCanType TomatoType)
        (canContain MicrowaveType EggType)
        (canContain MicrowaveType MugType)
        (canContain MicrowaveType PlateType)
        (canContain MicrowaveType TomatoType)
        (canContain ShelfType CreditCardType)
        (canContain ShelfType DishSpongeType)
        (canContain ShelfType MugType)
        (canContain ShelfType PlateType)
        (canContain ShelfType PotType)
        (canContain SinkBasinType DishSpongeType)
        (canContain SinkBasinType EggType)
        (canContain SinkBasinType ForkType)
        (canContain SinkBasinType KnifeType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType PlateType)
        (canContain SinkBasinType PotType)
        (canContain SinkBasinType TomatoType)
        (objectType DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57 DishSpongeType)
        (inReceptacle DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57 Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72)
        (objectAtLocation DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57 loc_bar_0_bar__minus_8_bar_1_bar_30)
        (pickupable DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57)
        (cleanable DishSponge_bar__minus_01_dot_72_bar__plus_01_dot_36_bar__plus_01_dot_57)
        (objectType Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60 MugType)
        (inReceptacle Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60 Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25)
        (objectAtLocation Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60 loc_bar_0_bar_5_bar_1_bar_0)
        (pickupable Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60)
        (isReceptacleObject Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60)
        (cleanable Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60)
        (heatable Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60)
        (coolable Mug_bar__plus_01_dot_49_bar__plus_00_dot_10_bar__minus_01_dot_60)
        (objectType Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72 EggType)
        (inReceptacle Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72 CounterTop_bar__minus_01_dot_24_bar__plus_00_dot_97_bar__minus_00_dot_64)
        (objectAtLocation Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72 loc_bar__minus_3_bar__minus_8_bar_0_bar_30)
        (pickupable Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72)
        (cleanable Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72)
        (heatable Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72)
        (coolable Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72)
        (sliceable Egg_bar__plus_00_dot_60_bar__plus_00_dot_58_bar__plus_01_dot_72)
        (objectType Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92 KnifeType)
        (inReceptacle Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92 CounterTop_bar__plus_00_dot_93_bar__plus_00_dot_95_bar__minus_00_dot_21)
        (objectAtLocation Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92 loc_bar_1_bar__minus_1_bar_1_bar_30)
        (pickupable Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92)
        (cleanable Knife_bar__plus_00_dot_72_bar__plus_00_dot_12_bar__minus_00_dot_92)
        (objectType Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14 ForkType)
        (inReceptacle Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14 Sink_bar__minus_00_dot_70_bar__plus_00_dot_93_bar__minus_00_dot_65_bar_SinkBasin)
        (objectAtLocation Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14 loc_bar_0_bar__minus_3_bar_3_bar_30)
        (pickupable Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14)
        (cleanable Fork_bar__plus_02_dot_23_bar__plus_01_dot_39_bar__minus_02_dot_14)
        (objectType Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28 TomatoType)
        (inReceptacle Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28 Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25)
        (objectAtLocation Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28 loc_bar_0_bar_5_bar_1_bar_0)
        (pickupable Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28)
        (cleanable Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28)
        (heatable Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28)
        (coolable Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28)
        (sliceable Tomato_bar__minus_01_dot_56_bar__plus_00_dot_51_bar__minus_01_dot_28)
        (objectType CreditCard_bar__minus_02_dot_03_bar__plus_01_dot_20_bar__minus_01_dot_03 CreditCardType)
        (inReceptacle CreditCard_bar__minus_02_dot_03_bar__plus_01_dot_20_bar__minus_01_dot_03 Drawer_bar__plus_00_dot_64_bar__plus_00_dot_76_bar__minus_00_dot_65)
        (objectAtLocation CreditCard_bar__minus_02_dot_03_bar__plus_01_dot_20_bar__minus_01_dot_03 loc_bar_0_bar__minus_4_bar_1_bar_30)
        (pickupable CreditCard_bar__minus_02_dot_03_bar__plus_01_dot_20_bar__minus_01_dot_03)
        (objectType Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80 PlateType)
        (inReceptacle Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80 Cabinet_bar__plus_00_dot_65_bar__plus_00_dot_48_bar__minus_01_dot_72)
        (objectAtLocation Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80 loc_bar_0_bar__minus_8_bar_1_bar_30)
        (pickupable Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80)
        (isReceptacleObject Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80)
        (cleanable Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80)
        (heatable Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80)
        (coolable Plate_bar__plus_00_dot_33_bar__plus_00_dot_52_bar__minus_02_dot_80)
        (objectType Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29 PotType)
        (inReceptacle Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29 Fridge_bar__plus_00_dot_97_bar__plus_00_dot_00_bar__plus_01_dot_25)
        (objectAtLocation Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29 loc_bar_0_bar_5_bar_1_bar_0)
        (pickupable Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29)
        (isReceptacleObject Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29)
        (cleanable Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29)
        (coolable Pot_bar__minus_01_dot_71_bar__plus_01_dot_08_bar__minus_00_dot_29)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (cleanable ?o)
                            (objectType ?o DishSpongeType)
                            (receptacleType ?r ShelfType)
                            (isClean ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
