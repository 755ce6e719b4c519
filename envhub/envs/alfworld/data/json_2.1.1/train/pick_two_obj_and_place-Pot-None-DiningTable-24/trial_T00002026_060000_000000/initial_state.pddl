
(define (problem plan_trial_T00002026_060000_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36 - object
        Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87 - object
        DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44 - object
        Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30 - object
        Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54 - object
        SoapBottle_bar__plus_02_dot_82_bar__plus_00_dot_72_bar__minus_01_dot_84 - object
        ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37 - object
        Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81 - object
        Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61 - object
        Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90 - object
        BreadType - otype
        ButterKnifeType - otype
        CupType - otype
        DishSpongeType - otype
        MugType - otype
        PotType - otype
        SoapBottleType - otype
        SpoonType - otype
        TomatoType - otype
        CabinetType - rtype
        CounterTopType - rtype
        DiningTableType - rtype
        DrawerType - rtype
        FridgeType - rtype
        MicrowaveType - rtype
        SinkBasinType - rtype
        Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_36 - receptacle
        Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_69 - receptacle
        Cabinet_bar__minus_00_dot_42_bar__plus_00_dot_67_bar__plus_03_dot_74 - receptacle
        Cabinet_bar__minus_00_dot_42_bar__plus_01_dot_70_bar__plus_03_dot_74 - receptacle
        Cabinet_bar__minus_01_dot_10_bar__plus_01_dot_93_bar__plus_03_dot_73 - receptacle
        Cabinet_bar__minus_01_dot_14_bar__plus_00_dot_39_bar__plus_03_dot_52 - receptacle
        Cabinet_bar__minus_01_dot_96_bar__plus_01_dot_93_bar__plus_03_dot_73 - receptacle
        Cabinet_bar__minus_01_dot_97_bar__plus_00_dot_39_bar__plus_03_dot_52 - receptacle
        Cabinet_bar__minus_01_dot_98_bar__plus_01_dot_78_bar__plus_03_dot_73 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_00_dot_64_bar__plus_01_dot_68 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_41_bar__plus_01_dot_68 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_69_bar__plus_02_dot_57 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_93_bar__plus_01_dot_69 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_06 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_02_dot_56 - receptacle
        Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_03_dot_18 - receptacle
        Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_17 - receptacle
        Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_42 - receptacle
        Cabinet_bar__minus_02_dot_62_bar__plus_01_dot_93_bar__plus_03_dot_73 - receptacle
        Cabinet_bar__minus_02_dot_95_bar__plus_01_dot_93_bar__plus_03_dot_73 - receptacle
        CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_00_dot_98 - receptacle
        CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_02_dot_37 - receptacle
        CounterTop_bar__minus_02_dot_08_bar__plus_00_dot_86_bar__plus_03_dot_80 - receptacle
        DiningTable_bar__minus_00_dot_88_bar__plus_00_dot_01_bar__plus_01_dot_32 - receptacle
        Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_00_dot_98 - receptacle
        Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_20 - receptacle
        Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_53 - receptacle
        Fridge_bar__minus_02_dot_64_bar__plus_00_dot_00_bar__plus_02_dot_13 - receptacle
        Microwave_bar__minus_01_dot_53_bar__plus_01_dot_25_bar__plus_03_dot_88 - receptacle
        Sink_bar__minus_01_dot_70_bar__plus_00_dot_73_bar__plus_03_dot_83_bar_SinkBasin - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar_0_bar_5_bar_1_bar_30 - location
        loc_bar_0_bar_7_bar_2_bar_30 - location
        loc_bar_1_bar_10_bar_1_bar_30 - location
        loc_bar__minus_1_bar_10_bar_1_bar_30 - location
        loc_bar__minus_1_bar_11_bar_1_bar_30 - location
        loc_bar__minus_1_bar_12_bar_1_bar_30 - location
        loc_bar__minus_3_bar_10_bar_0_bar_30 - location
        loc_bar__minus_3_bar_12_bar_0_bar_30 - location
        loc_bar__minus_3_bar_13_bar_0_bar_0 - location
        loc_bar__minus_4_bar_8_bar_2_bar_30 - location
        loc_bar__minus_5_bar_10_bar_0_bar_30 - location
        loc_bar__minus_5_bar_13_bar_3_bar_30 - location
        loc_bar__minus_5_bar_8_bar_3_bar_30 - location
        loc_bar__minus_6_bar_12_bar_3_bar_30 - location
        loc_bar__minus_6_bar_13_bar_0_bar_0 - location
        loc_bar__minus_6_bar_13_bar_0_bar_30 - location
        loc_bar__minus_6_bar_13_bar_0_bar__minus_30 - location
        loc_bar__minus_6_bar_13_bar_3_bar_0 - location
        loc_bar__minus_6_bar_9_bar_3_bar__minus_30 - location
        loc_bar__minus_7_bar_11_bar_0_bar_0 - location
        loc_bar__minus_7_bar_11_bar_3_bar__minus_30 - location
        loc_bar__minus_7_bar_12_bar_0_bar_30 - location
        loc_bar__minus_7_bar_12_bar_3_bar__minus_30 - location
        loc_bar__minus_7_bar_6_bar_3_bar_30 - location
        loc_bar__minus_7_bar_6_bar_3_bar__minus_30 - location
        loc_bar__minus_7_bar_7_bar_3_bar__minus_30 - location
        loc_bar__minus_7_bar_9_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_36 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_36 loc_bar__minus_1_bar_11_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_36)
        (receptacleType Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_69 loc_bar__minus_1_bar_12_bar_1_bar_30)
        (openable Cabinet_bar__plus_00_dot_58_bar__plus_00_dot_39_bar__plus_02_dot_69)
        (receptacleType Cabinet_bar__minus_00_dot_42_bar__plus_00_dot_67_bar__plus_03_dot_74 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_42_bar__plus_00_dot_67_bar__plus_03_dot_74 loc_bar__minus_3_bar_12_bar_0_bar_30)
        (openable Cabinet_bar__minus_00_dot_42_bar__plus_00_dot_67_bar__plus_03_dot_74)
        (receptacleType Cabinet_bar__minus_00_dot_42_bar__plus_01_dot_70_bar__plus_03_dot_74 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_00_dot_42_bar__plus_01_dot_70_bar__plus_03_dot_74 loc_bar__minus_3_bar_13_bar_0_bar_0)
        (openable Cabinet_bar__minus_00_dot_42_bar__plus_01_dot_70_bar__plus_03_dot_74)
        (receptacleType Cabinet_bar__minus_01_dot_10_bar__plus_01_dot_93_bar__plus_03_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_10_bar__plus_01_dot_93_bar__plus_03_dot_73 loc_bar__minus_6_bar_13_bar_0_bar__minus_30)
        (openable Cabinet_bar__minus_01_dot_10_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (receptacleType Cabinet_bar__minus_01_dot_14_bar__plus_00_dot_39_bar__plus_03_dot_52 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_14_bar__plus_00_dot_39_bar__plus_03_dot_52 loc_bar__minus_3_bar_10_bar_0_bar_30)
        (openable Cabinet_bar__minus_01_dot_14_bar__plus_00_dot_39_bar__plus_03_dot_52)
        (receptacleType Cabinet_bar__minus_01_dot_96_bar__plus_01_dot_93_bar__plus_03_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_96_bar__plus_01_dot_93_bar__plus_03_dot_73 loc_bar__minus_6_bar_13_bar_0_bar__minus_30)
        (openable Cabinet_bar__minus_01_dot_96_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (receptacleType Cabinet_bar__minus_01_dot_97_bar__plus_00_dot_39_bar__plus_03_dot_52 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_97_bar__plus_00_dot_39_bar__plus_03_dot_52 loc_bar__minus_5_bar_10_bar_0_bar_30)
        (openable Cabinet_bar__minus_01_dot_97_bar__plus_00_dot_39_bar__plus_03_dot_52)
        (receptacleType Cabinet_bar__minus_01_dot_98_bar__plus_01_dot_78_bar__plus_03_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_01_dot_98_bar__plus_01_dot_78_bar__plus_03_dot_73 loc_bar__minus_7_bar_11_bar_0_bar_0)
        (openable Cabinet_bar__minus_01_dot_98_bar__plus_01_dot_78_bar__plus_03_dot_73)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_00_dot_64_bar__plus_01_dot_68 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_00_dot_64_bar__plus_01_dot_68 loc_bar__minus_5_bar_8_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_00_dot_64_bar__plus_01_dot_68)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_41_bar__plus_01_dot_68 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_41_bar__plus_01_dot_68 loc_bar__minus_7_bar_6_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_41_bar__plus_01_dot_68)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_69_bar__plus_02_dot_57 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_69_bar__plus_02_dot_57 loc_bar__minus_7_bar_11_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_69_bar__plus_02_dot_57)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_93_bar__plus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_93_bar__plus_01_dot_69 loc_bar__minus_7_bar_6_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_01_dot_93_bar__plus_01_dot_69)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_06 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_06 loc_bar__minus_7_bar_6_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_06)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69 loc_bar__minus_7_bar_7_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_02_dot_56 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_02_dot_56 loc_bar__minus_6_bar_9_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_02_dot_56)
        (receptacleType Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_03_dot_18 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_03_dot_18 loc_bar__minus_7_bar_12_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_03_dot_18)
        (receptacleType Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_17 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_17 loc_bar__minus_5_bar_13_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_17)
        (receptacleType Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_42 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_42 loc_bar__minus_6_bar_12_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_43_bar__plus_00_dot_44_bar__plus_03_dot_42)
        (receptacleType Cabinet_bar__minus_02_dot_62_bar__plus_01_dot_93_bar__plus_03_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_62_bar__plus_01_dot_93_bar__plus_03_dot_73 loc_bar__minus_6_bar_13_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_62_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (receptacleType Cabinet_bar__minus_02_dot_95_bar__plus_01_dot_93_bar__plus_03_dot_73 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_95_bar__plus_01_dot_93_bar__plus_03_dot_73 loc_bar__minus_6_bar_13_bar_3_bar_0)
        (openable Cabinet_bar__minus_02_dot_95_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (receptacleType CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_00_dot_98 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_00_dot_98 loc_bar_0_bar_5_bar_1_bar_30)
        (receptacleType CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_02_dot_37 CounterTopType)
        (receptacleAtLocation CounterTop_bar__plus_00_dot_86_bar__plus_00_dot_86_bar__plus_02_dot_37 loc_bar_1_bar_10_bar_1_bar_30)
        (receptacleType CounterTop_bar__minus_02_dot_08_bar__plus_00_dot_86_bar__plus_03_dot_80 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_02_dot_08_bar__plus_00_dot_86_bar__plus_03_dot_80 loc_bar__minus_7_bar_12_bar_0_bar_30)
        (receptacleType DiningTable_bar__minus_00_dot_88_bar__plus_00_dot_01_bar__plus_01_dot_32 DiningTableType)
        (receptacleAtLocation DiningTable_bar__minus_00_dot_88_bar__plus_00_dot_01_bar__plus_01_dot_32 loc_bar__minus_4_bar_8_bar_2_bar_30)
        (receptacleType Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_00_dot_98 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_00_dot_98 loc_bar_0_bar_7_bar_2_bar_30)
        (openable Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_00_dot_98)
        (receptacleType Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_20 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_20 loc_bar__minus_1_bar_10_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_20)
        (receptacleType Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_53 DrawerType)
        (receptacleAtLocation Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_53 loc_bar__minus_1_bar_12_bar_1_bar_30)
        (openable Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_53)
        (receptacleType Fridge_bar__minus_02_dot_64_bar__plus_00_dot_00_bar__plus_02_dot_13 FridgeType)
        (receptacleAtLocation Fridge_bar__minus_02_dot_64_bar__plus_00_dot_00_bar__plus_02_dot_13 loc_bar__minus_7_bar_9_bar_3_bar_30)
        (openable Fridge_bar__minus_02_dot_64_bar__plus_00_dot_00_bar__plus_02_dot_13)
        (receptacleType Microwave_bar__minus_01_dot_53_bar__plus_01_dot_25_bar__plus_03_dot_88 MicrowaveType)
        (receptacleAtLocation Microwave_bar__minus_01_dot_53_bar__plus_01_dot_25_bar__plus_03_dot_88 loc_bar__minus_6_bar_13_bar_0_bar_0)
        (openable Microwave_bar__minus_01_dot_53_bar__plus_01_dot_25_bar__plus_03_dot_88)
        (receptacleType Sink_bar__minus_01_dot_70_bar__plus_00_dot_73_bar__plus_03_dot_83_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__minus_01_dot_70_bar__plus_00_dot_73_bar__plus_03_dot_83_bar_SinkBasin loc_bar__minus_6_bar_13_bar_0_bar_30)
        (canContain CabinetType CupType)
        (canContain CabinetType DishSpongeType)
        (canContain CabinetType MugType)
        (canContain CabinetType PotType)
        (canContain CabinetType SoapBottleType)
        (canContain CounterTopType BreadType)
        (canContain CounterTopType ButterKnifeType)
        (canContain CounterTopType CupType)
        (canContain CounterTopType DishSpongeType)
        (canContain CounterTopType MugType)
        (canContain CounterTopType PotType)
        (canContain CounterTopType SoapBottleType)
        (canContain CounterTopType SpoonType)
        (canContain CounterTopType TomatoType)
        (canContain DiningTableType BreadType)
        (canContain DiningTableType ButterKnifeType)
        (canContain DiningTableType CupType)
        (canContain DiningTableType DishSpongeType)
        (canContain DiningTableType MugType)
        (canContain DiningTableType PotType)
        (canContain DiningTableType SoapBottleType)
        (canContain DiningTableType SpoonType)
        (canContain DiningTableType TomatoType)
        (canContain DrawerType ButterKnifeType)
        (canContain DrawerType DishSpongeType)
        (canContain DrawerType SoapBottleType)
        (canContain DrawerType SpoonType)
        (canContain FridgeType BreadType)
        (canContain FridgeType CupType)
        (canContain FridgeType MugType)
        (canContain FridgeType PotType)
        (canContain FridgeType TomatoType)
        (canContain MicrowaveType BreadType)
        (canContain MicrowaveType CupType)
        (canContain MicrowaveType MugType)
        (canContain MicrowaveType TomatoType)
        (canContain SinkBasinType ButterKnifeType)
        (canContain SinkBasinType CupType)
        (canContain SinkBasinType DishSpongeType)
        (canContain SinkBasinType MugType)
        (canContain SinkBasinType PotType)
        (canContain SinkBasinType SpoonType)
        (canContain SinkBasinType TomatoType)
        (objectType Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36 PotType)
        (inReceptacle Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36 Cabinet_bar__minus_02_dot_62_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (objectAtLocation Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36 loc_bar__minus_6_bar_13_bar_3_bar_0)
        (pickupable Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36)
        (isReceptacleObject Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36)
        (cleanable Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36)
        (coolable Pot_bar__plus_02_dot_49_bar__plus_00_dot_85_bar__plus_00_dot_36)
        (objectType Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87 PotType)
        (inReceptacle Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87 Cabinet_bar__minus_00_dot_42_bar__plus_01_dot_70_bar__plus_03_dot_74)
        (objectAtLocation Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87 loc_bar__minus_3_bar_13_bar_0_bar_0)
        (pickupable Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87)
        (isReceptacleObject Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87)
        (cleanable Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87)
        (coolable Pot_bar__minus_01_dot_51_bar__plus_01_dot_56_bar__minus_00_dot_87)
        (objectType DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44 DishSpongeType)
        (inReceptacle DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44 Cabinet_bar__minus_01_dot_10_bar__plus_01_dot_93_bar__plus_03_dot_73)
        (objectAtLocation DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44 loc_bar__minus_6_bar_13_bar_0_bar__minus_30)
        (pickupable DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44)
        (cleanable DishSponge_bar__minus_02_dot_11_bar__plus_01_dot_09_bar__minus_01_dot_44)
        (objectType Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30 CupType)
        (inReceptacle Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30 Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69)
        (objectAtLocation Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30 loc_bar__minus_7_bar_7_bar_3_bar__minus_30)
        (pickupable Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30)
        (isReceptacleObject Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30)
        (cleanable Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30)
        (heatable Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30)
        (coolable Cup_bar__minus_02_dot_12_bar__plus_01_dot_47_bar__plus_00_dot_30)
        (objectType Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54 SpoonType)
        (inReceptacle Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54 CounterTop_bar__minus_02_dot_08_bar__plus_00_dot_86_bar__plus_03_dot_80)
        (objectAtLocation Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54 loc_bar__minus_7_bar_12_bar_0_bar_30)
        (pickupable Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54)
        (cleanable Spoon_bar__minus_02_dot_19_bar__plus_00_dot_69_bar__minus_00_dot_54)
        (objectType SoapBottle_bar__plus_02_dot_82_bar__plus_00_dot_72_bar__minus_01_dot_84 SoapBottleType)
        (inReceptacle SoapBottle_bar__plus_02_dot_82_bar__plus_00_dot_72_bar__minus_01_dot_84 Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_03_dot_18)
        (objectAtLocation SoapBottle_bar__plus_02_dot_82_bar__plus_00_dot_72_bar__minus_01_dot_84 loc_bar__minus_7_bar_12_bar_3_bar__minus_30)
        (pickupable SoapBottle_bar__plus_02_dot_82_bar__plus_00_dot_72_bar__minus_01_dot_84)
        (objectType ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37 ButterKnifeType)
        (inReceptacle ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37 Drawer_bar__plus_00_dot_73_bar__plus_00_dot_70_bar__plus_02_dot_53)
        (objectAtLocation ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37 loc_bar__minus_1_bar_12_bar_1_bar_30)
        (pickupable ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37)
        (cleanable ButterKnife_bar__minus_00_dot_60_bar__plus_00_dot_50_bar__plus_02_dot_37)
        (objectType Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81 TomatoType)
        (inReceptacle Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81 DiningTable_bar__minus_00_dot_88_bar__plus_00_dot_01_bar__plus_01_dot_32)
        (objectAtLocation Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81 loc_bar__minus_4_bar_8_bar_2_bar_30)
        (pickupable Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81)
        (cleanable Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81)
        (heatable Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81)
        (coolable Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81)
        (sliceable Tomato_bar__minus_00_dot_22_bar__plus_00_dot_05_bar__plus_01_dot_81)
        (objectType Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61 MugType)
        (inReceptacle Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61 Cabinet_bar__minus_02_dot_38_bar__plus_02_dot_01_bar__plus_01_dot_69)
        (objectAtLocation Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61 loc_bar__minus_7_bar_7_bar_3_bar__minus_30)
        (pickupable Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61)
        (isReceptacleObject Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61)
        (cleanable Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61)
        (heatable Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61)
        (coolable Mug_bar__plus_01_dot_55_bar__plus_01_dot_18_bar__plus_01_dot_61)
        (objectType Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90 BreadType)
        (inReceptacle Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90 CounterTop_bar__minus_02_dot_08_bar__plus_00_dot_86_bar__plus_03_dot_80)
        (objectAtLocation Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90 loc_bar__minus_7_bar_12_bar_0_bar_30)
        (pickupable Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90)
        (heatable Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90)
        (coolable Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90)
        (sliceable Bread_bar__minus_00_dot_57_bar__plus_01_dot_49_bar__minus_00_dot_90)
        )

                (:goal
                    (and
                        (exists (?r - receptacle)
                            (exists (?o1 - object)
                                (and
                                    (objectType ?o1 PotType)
                                    (receptacleType ?r DiningTableType)
                                    (inReceptacle ?o1 ?r)
                                    (exists (?o2 - object)
                                        (and
                                            (not (= ?o1 ?o2))
                                            (objectType ?o2 PotType)
                                            (receptacleType ?r DiningTableType)
                                            (inReceptacle ?o2 ?r)
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
            
