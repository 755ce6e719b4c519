
(define (problem plan_trial_T00002026_030001_000003)
    (:domain alfred)
    (:objects
        agent1 - agent
        Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12 - object
        Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24 - object
        Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15 - object
        PepperShaker_bar__minus_01_dot_63_bar__plus_00_dot_70_bar__minus_01_dot_15 - object
        Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28 - object
        Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61 - object
        Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03 - object
        Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59 - object
        Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93 - object
        KettleType - otype
        KnifeType - otype
        LettuceType - otype
        PanType - otype
        PepperShakerType - otype
        PotType - otype
        PotatoType - otype
        SpatulaType - otype
        SpoonType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DrawerType - rtype
        FridgeType - rtype
        GarbageCanType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_15_bar__plus_02_dot_01_bar__minus_01_dot_60 - receptacle
        Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__plus_00_dot_47 - receptacle
        Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__minus_00_dot_78 - receptacle
        Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_64 - receptacle
        Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_70 - receptacle
        Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_01_dot_58 - receptacle
        Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__minus_00_dot_24 - receptacle
        Cabinet_bar__minus_02_dot_29_bar__plus_01_dot_97_bar__minus_01_dot_33 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_36 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_41 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_64 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_69 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_02_dot_93 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_00_dot_29 - receptacle
        Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_01_dot_28 - receptacle
        CounterTop_bar__plus_00_dot_47_bar__plus_00_dot_95_bar__minus_01_dot_63 - receptacle
        CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41 - receptacle
        CounterTop_bar__minus_00_dot_36_bar__plus_00_dot_95_bar__plus_01_dot_09 - receptacle
        CounterTop_bar__minus_01_dot_49_bar__plus_00_dot_95_bar__plus_01_dot_32 - receptacle
        Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_44 - receptacle
        Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_90 - receptacle
        Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_01_dot_37 - receptacle
        Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03 - receptacle
        Fridge_bar__minus_02_dot_48_bar__plus_00_dot_00_bar__minus_00_dot_78 - receptacle
        GarbageCan_bar__plus_01_dot_65_bar__plus_00_dot_00_bar__plus_00_dot_68 - receptacle
        Microwave_bar__minus_02_dot_58_bar__plus_00_dot_90_bar__plus_02_dot_44 - receptacle
        Sink_bar__plus_01_dot_38_bar__plus_00_dot_81_bar__minus_01_dot_27_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_2_bar__minus_4_bar_2_bar_30 - location
        loc_bar_2_bar__minus_4_bar_2_bar__minus_30 - location
        loc_bar_3_bar_1_bar_1_bar__minus_30 - location
        loc_bar_3_bar_2_bar_1_bar_30 - location
        loc_bar_3_bar__minus_2_bar_1_bar__minus_30 - location
        loc_bar_4_bar_3_bar_1_bar_30 - location
        loc_bar_4_bar__minus_3_bar_2_bar_30 - location
        loc_bar__minus_1_bar_9_bar_2_bar_30 - location
        loc_bar__minus_5_bar_0_bar_3_bar_30 - location
        loc_bar__minus_5_bar_2_bar_3_bar_30 - location
        loc_bar__minus_5_bar_7_bar_3_bar_30 - location
        loc_bar__minus_5_bar__minus_2_bar_3_bar_30 - location
        loc_bar__minus_5_bar__minus_3_bar_3_bar_0 - location
        loc_bar__minus_5_bar__minus_4_bar_3_bar_0 - location
        loc_bar__minus_5_bar__minus_5_bar_3_bar__minus_30 - location
        loc_bar__minus_6_bar_1_bar_3_bar_0 - location
        loc_bar__minus_6_bar_1_bar_3_bar_30 - location
        loc_bar__minus_6_bar_3_bar_3_bar_30 - location
        loc_bar__minus_6_bar_5_bar_3_bar_0 - location
        loc_bar__minus_6_bar_5_bar_3_bar_30 - location
        loc_bar__minus_6_bar_7_bar_3_bar_30 - location
        loc_bar__minus_6_bar__minus_3_bar_3_bar_30 - location
        loc_bar__minus_7_bar_10_bar_3_bar_0 - location
        loc_bar__minus_7_bar_10_bar_3_bar_30 - location
        loc_bar__minus_7_bar_2_bar_3_bar_30 - location
        loc_bar__minus_7_bar_3_bar_3_bar_0 - location
        loc_bar__minus_7_bar_8_bar_3_bar_0 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_15_bar__plus_02_dot_01_bar__minus_01_dot_60 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_15_bar__plus_02_dot_01_bar__minus_01_dot_60 loc_bar_2_bar__minus_4_bar_2_bar__minus_30)
        (openable Cabinet_bar__plus_00_dot_15_bar__plus_02_dot_01_bar__minus_01_dot_60)
        (receptacleType Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__plus_00_dot_47 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__plus_00_dot_47 loc_bar_3_bar_1_bar_1_bar__minus_30)
        (openable Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__plus_00_dot_47)
        (receptacleType Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__minus_00_dot_78 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__minus_00_dot_78 loc_bar_3_bar__minus_2_bar_1_bar__minus_30)
        (openable Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__minus_00_dot_78)
        (receptacleType Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_64 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_64 loc_bar__minus_5_bar_0_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_64)
        (receptacleType Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_70 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_70 loc_bar__minus_5_bar_2_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_00_dot_70)
        (receptacleType Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_01_dot_58 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_01_dot_58 loc_bar__minus_5_bar_7_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__plus_01_dot_58)
        (receptacleType Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__minus_00_dot_24 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__minus_00_dot_24 loc_bar__minus_5_bar__minus_2_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_15_bar__plus_00_dot_40_bar__minus_00_dot_24)
        (receptacleType Cabinet_bar__minus_02_dot_29_bar__plus_01_dot_97_bar__minus_01_dot_33 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_29_bar__plus_01_dot_97_bar__minus_01_dot_33 loc_bar__minus_5_bar__minus_5_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_29_bar__plus_01_dot_97_bar__minus_01_dot_33)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_36 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_36 loc_bar__minus_6_bar_1_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_36)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_41 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_41 loc_bar__minus_7_bar_3_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_00_dot_41)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_64 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_64 loc_bar__minus_6_bar_5_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_64)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_69 loc_bar__minus_7_bar_8_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_01_dot_69)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_02_dot_93 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_02_dot_93 loc_bar__minus_7_bar_10_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_01_dot_95_bar__plus_02_dot_93)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_00_dot_29 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_00_dot_29 loc_bar__minus_5_bar__minus_3_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_00_dot_29)
        (receptacleType Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_01_dot_28 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_01_dot_28 loc_bar__minus_5_bar__minus_4_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_01_dot_28)
        (receptacleType CounterTop_bar__plus_00_dot_47_bar__plus_00_dot_95_bar__minus_01_dot_63 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_47_bar__plus_00_dot_95_bar__minus_01_dot_63 loc_bar_2_bar__minus_4_bar_2_bar_30)
        (receptacleType CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41 loc_bar_4_bar_3_bar_1_bar_30)
        (receptacleType CounterTop_bar__minus_00_dot_36_bar__plus_00_dot_95_bar__plus_01_dot_09 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_00_dot_36_bar__plus_00_dot_95_bar__plus_01_dot_09 loc_bar__minus_1_bar_9_bar_2_bar_30)
        (receptacleType CounterTop_bar__minus_01_dot_49_bar__plus_00_dot_95_bar__plus_01_dot_32 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_01_dot_49_bar__plus_00_dot_95_bar__plus_01_dot_32 loc_bar__minus_7_bar_2_bar_3_bar_30)
        (receptacleType Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_44 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_44 loc_bar__minus_6_bar_3_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_44)
        (receptacleType Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_90 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_90 loc_bar__minus_6_bar_5_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_00_dot_90)
        (receptacleType Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_01_dot_37 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_01_dot_37 loc_bar__minus_6_bar_7_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__plus_01_dot_37)
        (receptacleType Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03 DrawerType)
        (receptacleAtLocation Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03 loc_bar__minus_6_bar_1_bar_3_bar_30)
        (openable Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03)
        (receptacleType Fridge_bar__minus_02_dot_48_bar__plus_00_dot_00_bar__minus_00_dot_78 FridgeType)
        (receptacleAtLocation Fridge_bar__minus_02_dot_48_bar__plus_00_dot_00_bar__minus_00_dot_78 loc_bar__minus_6_bar__minus_3_bar_3_bar_30)
        (openable Fridge_bar__minus_02_dot_48_bar__plus_00_dot_00_bar__minus_00_dot_78)
        (receptacleType GarbageCan_bar__plus_01_dot_65_bar__plus_00_dot_00_bar__plus_00_dot_68 GarbageCanType)
        (receptacleAtLocation GarbageCan_bar__plus_01_dot_65_bar__plus_00_dot_00_bar__plus_00_dot_68 loc_bar_3_bar_2_bar_1_bar_30)
        (receptacleType Microwave_bar__minus_02_dot_58_bar__plus_00_dot_90_bar__plus_02_dot_44 MicrowaveType)
        (receptacleAtLocation Microwave_bar__minus_02_dot_58_bar__plus_00_dot_90_bar__plus_02_dot_44 loc_bar__minus_7_bar_10_bar_3_bar_30)
        (openable Microwave_bar__minus_02_dot_58_bar__plus_00_dot_90_bar__plus_02_dot_44)
        (receptacleType Sink_bar__plus_01_dot_38_bar__plus_00_dot_81_bar__minus_01_dot_27_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__plus_01_dot_38_bar__plus_00_dot_81_bar__minus_01_dot_27_bar_SinkBasin loc_bar_4_bar__minus_3_bar_2_bar_30)
        (canContain CabinetType KettleType)
        (canContain CabinetType PanType)
        (canContain CabinetType PepperShakerType)
        (canContain CabinetType PotType)
        (canContain CounterTopType KettleType)
        (canContain CounterTopType KnifeType)
        (canContain CounterTopType LettuceType)
        (canContain CounterTopType PanType)
        (canContain CounterTopType PepperShakerType)
        (canContain CounterTopType PotType)
        (canContain CounterTopType PotatoType)
        (canContain CounterTopType SpatulaType)
        (canContain CounterTopType SpoonType)
        (canContain DrawerType KnifeType)
        (canContain DrawerType PepperShakerType)
        (canContain DrawerType SpatulaType)
        (canContain DrawerType SpoonType)
        (canContain FridgeType LettuceType)
        (canContain FridgeType PanType)
        (canContain FridgeType PotType)
        (canContain FridgeType PotatoType)
        (canContain GarbageCanType LettuceType)
        (canContain GarbageCanType PotatoType)
        (canContain MicrowaveType PotatoType)
        (canContain SinkBasinType KettleType)
        (canContain SinkBasinType KnifeType)
        (canContain SinkBasinType LettuceType)
        (canContain SinkBasinType PanType)
        (canContain SinkBasinType PotType)
        (canContain SinkBasinType PotatoType)
        (canContain SinkBasinType SpatulaType)
        (canContain SinkBasinType SpoonType)
        (objectType Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12 PotType)
        (inReceptacle Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12 Cabinet_bar__minus_02_dot_29_bar__plus_01_dot_97_bar__minus_01_dot_33)
        (objectAtLocation Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12 loc_bar__minus_5_bar__minus_5_bar_3_bar__minus_30)
        (pickupable Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12)
        (isReceptacleObject Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12)
        (cleanable Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12)
        (coolable Pot_bar__minus_00_dot_79_bar__plus_00_dot_97_bar__minus_02_dot_12)
        (objectType Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24 LettuceType)
        (inReceptacle Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24 CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41)
        (objectAtLocation Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24 loc_bar_4_bar_3_bar_1_bar_30)
        (pickupable Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24)
        (cleanable Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24)
        (coolable Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24)
        (sliceable Lettuce_bar__plus_02_dot_06_bar__plus_00_dot_45_bar__minus_01_dot_24)
        (objectType Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15 KettleType)
        (inReceptacle Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15 Cabinet_bar__plus_01_dot_57_bar__plus_02_dot_01_bar__plus_00_dot_47)
        (objectAtLocation Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15 loc_bar_3_bar_1_bar_1_bar__minus_30)
        (pickupable Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15)
        (cleanable Kettle_bar__plus_01_dot_27_bar__plus_01_dot_86_bar__plus_01_dot_15)
        (objectType PepperShaker_bar__minus_01_dot_63_bar__plus_00_dot_70_bar__minus_01_dot_15 PepperShakerType)
        (inReceptacle PepperShaker_bar__minus_01_dot_63_bar__plus_00_dot_70_bar__minus_01_dot_15 Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03)
        (objectAtLocation PepperShaker_bar__minus_01_dot_63_bar__plus_00_dot_70_bar__minus_01_dot_15 loc_bar__minus_6_bar_1_bar_3_bar_30)
        (pickupable PepperShaker_bar__minus_01_dot_63_bar__plus_00_dot_70_bar__minus_01_dot_15)
        (objectType Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28 SpoonType)
        (inReceptacle Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28 CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41)
        (objectAtLocation Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28 loc_bar_4_bar_3_bar_1_bar_30)
        (pickupable Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28)
        (cleanable Spoon_bar__plus_02_dot_35_bar__plus_00_dot_78_bar__minus_00_dot_28)
        (objectType Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61 PanType)
        (inReceptacle Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61 Cabinet_bar__minus_02_dot_45_bar__plus_02_dot_15_bar__minus_01_dot_28)
        (objectAtLocation Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61 loc_bar__minus_5_bar__minus_4_bar_3_bar_0)
        (pickupable Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61)
        (isReceptacleObject Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61)
        (cleanable Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61)
        (coolable Pan_bar__minus_00_dot_85_bar__plus_01_dot_41_bar__plus_02_dot_61)
        (objectType Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03 PotatoType)
        (inReceptacle Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03 CounterTop_bar__plus_01_dot_59_bar__plus_00_dot_95_bar__plus_00_dot_41)
        (objectAtLocation Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03 loc_bar_4_bar_3_bar_1_bar_30)
        (pickupable Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03)
        (cleanable Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03)
        (heatable Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03)
        (coolable Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03)
        (sliceable Potato_bar__minus_02_dot_44_bar__plus_01_dot_53_bar__plus_02_dot_03)
        (objectType Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59 SpatulaType)
        (inReceptacle Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59 CounterTop_bar__minus_00_dot_36_bar__plus_00_dot_95_bar__plus_01_dot_09)
        (objectAtLocation Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59 loc_bar__minus_1_bar_9_bar_2_bar_30)
        (pickupable Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59)
        (cleanable Spatula_bar__minus_02_dot_91_bar__plus_01_dot_93_bar__plus_01_dot_59)
        (objectType Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93 KnifeType)
        (inReceptacle Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93 Drawer_bar__minus_02_dot_28_bar__plus_00_dot_79_bar__minus_00_dot_03)
        (objectAtLocation Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93 loc_bar__minus_6_bar_1_bar_3_bar_30)
        (pickupable Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93)
        (cleanable Knife_bar__plus_02_dot_68_bar__plus_00_dot_24_bar__plus_01_dot_93)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (cleanable ?o)
                            (objectType ?o PotType)
                            (receptacleType ?r CounterTopType)
                            (isClean ?o)
                            (inReceptacle ?o ?r)
                        )
                    )
                )
            )
        )
    )
    
